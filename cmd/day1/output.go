package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/day1ai/day1/internal/memview"
)

// printer writes for people (aligned columns, colour on a terminal) or JSON.
type printer struct {
	w      io.Writer
	asJSON bool
	color  bool
}

func newPrinter(w io.Writer, asJSON, noColor bool) *printer {
	return &printer{w: w, asJSON: asJSON, color: !noColor && !asJSON && os.Getenv("NO_COLOR") == "" && isTerminal(w)}
}

// isTerminal reports whether w is a character device such as a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// json writes v as indented JSON.
func (p *printer) json(v any) error {
	enc := json.NewEncoder(p.w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// emit writes v as JSON in --json mode, else calls human.
func (p *printer) emit(v any, human func()) error {
	if p.asJSON {
		return p.json(memview.JSON(v))
	}
	human()
	return nil
}

// table writes rows under a header, aligned.
func (p *printer) table(header []string, rows [][]string) {
	tw := tabwriter.NewWriter(p.w, 0, 4, 2, ' ', 0)
	if len(header) > 0 {
		for i, h := range header {
			header[i] = p.style(dim, h)
		}
		fmt.Fprintln(tw, strings.Join(header, "\t"))
	}
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
}

// line writes one line.
func (p *printer) line(format string, args ...any) {
	fmt.Fprintf(p.w, format+"\n", args...)
}

// ANSI styles.
const (
	bold   = "1"
	dim    = "2"
	red    = "31"
	green  = "32"
	yellow = "33"
	blue   = "34"
	cyan   = "36"
)

// style wraps s in an ANSI style when colour is on. Colour codes go around a cell's
// text only; tabwriter counts them, so every cell of a column gets the same style.
func (p *printer) style(code, s string) string {
	if !p.color || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// when formats a time for people.
func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05")
}

// or returns s, or def when s is empty.
func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// progress shows a bar of progress on stderr when it is a terminal, with counts,
// rate and time left (github.com/schollz/progressbar), one bar per phase.
type progress struct {
	w     io.Writer
	on    bool
	verb  string
	bar   *progressbar.ProgressBar
	shown string        // the phase the bar shows
	stop  chan struct{} // ends a spinner
	its   string        // what the bar counts, "records" by default
}

func newProgress(w io.Writer, verb string) *progress {
	return &progress{w: w, on: isTerminal(w), verb: verb}
}

// update shows done of total.
func (p *progress) update(done, total int) {
	if !p.on || total <= 0 {
		return
	}
	if p.stop != nil {
		// Counts replace the spinner.
		close(p.stop)
		p.stop = nil
		p.bar.Finish()
		p.bar = nil
	}
	if p.bar == nil || p.shown != p.verb {
		if p.bar != nil {
			p.bar.Finish()
		}
		p.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetDescription(p.verb),
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSetItsString(or(p.its, "records")),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionSetWidth(24),
		)
		p.shown = p.verb
	}
	p.bar.ChangeMax(total)
	p.bar.Set(done)
}

// spin shows a spinner with the time spent, for work that reports no progress,
// until done.
func (p *progress) spin() {
	if !p.on {
		return
	}
	p.bar = progressbar.NewOptions(-1,
		progressbar.OptionSetWriter(p.w),
		progressbar.OptionSetDescription(p.verb),
		progressbar.OptionSpinnerType(14),
		// The ticker below turns the spinner, under the bar's lock: the bar's own
		// ticker would read its state without the lock.
		progressbar.OptionSetSpinnerChangeInterval(0),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionClearOnFinish(),
	)
	p.stop = make(chan struct{})
	bar, stop := p.bar, p.stop
	go func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				bar.Add(1)
			}
		}
	}()
}

// done clears the bar or the spinner.
func (p *progress) done() {
	if p.stop != nil {
		close(p.stop)
		p.stop = nil
	}
	if p.bar != nil {
		p.bar.Finish()
		p.bar = nil
	}
}
