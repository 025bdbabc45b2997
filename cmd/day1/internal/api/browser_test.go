package api

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/store"
)

// The environment of TestPostChild: the URL it posts to and the JSON body.
const (
	postChildURL  = "DAY1_API_POST_URL"
	postChildBody = "DAY1_API_POST_BODY"
)

// TestPostChild is the process that writes while the browser test watches: it posts
// one JSON body and fails unless the API answers 201.
func TestPostChild(t *testing.T) {
	url := os.Getenv(postChildURL)
	if url == "" {
		t.Skip("helper process for the browser test's live write; runs only as its child")
	}
	res, err := http.Post(url, "application/json", strings.NewReader(os.Getenv(postChildBody)))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		body, _ := io.ReadAll(res.Body)
		t.Fatalf("POST %s: %d %s", url, res.StatusCode, body)
	}
}

// chromium finds a Chromium or Chrome binary: $DAY1_CHROMIUM, or one on PATH.
func chromium() string {
	if p := os.Getenv("DAY1_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browser opens a headless browser on the inspector of a seeded memory.
func browser(t *testing.T) (ctx context.Context, ts *httptest.Server, c *day1.Client, shot func(name string)) {
	t.Helper()
	return browserWith(t, Options{Poll: 100 * time.Millisecond})
}

// browserWith is browser with a server of the given options.
func browserWith(t *testing.T, o Options) (ctx context.Context, ts *httptest.Server, c *day1.Client, shot func(name string)) {
	t.Helper()
	bin := chromium()
	if bin == "" {
		if os.Getenv("DAY1_REQUIRE_BROWSER") != "" {
			t.Fatal("no Chromium found, and DAY1_REQUIRE_BROWSER says the browser tests must run (apt-get install chromium, or set DAY1_CHROMIUM)")
		}
		t.Skip("no Chromium found (apt-get install chromium, or set DAY1_CHROMIUM); the inspector's browser tests need one")
	}
	ts, c = newServer(t, o)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1280, 860))
	// The browser lives as long as the context of the first call; later calls run
	// under shorter timeouts. On a loaded machine Chromium now and then exits as it
	// starts: it is started again, up to three times in all.
	for try := 1; ; try++ {
		actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
		t.Cleanup(cancel)
		ctx, cancel = chromedp.NewContext(actx)
		t.Cleanup(cancel)
		ctx, cancel = context.WithTimeout(ctx, 90*time.Second)
		t.Cleanup(cancel)
		err := chromedp.Do(ctx)
		if err == nil {
			break
		}
		if try == 3 {
			t.Fatalf("starting %s: %v", bin, err)
		}
		t.Logf("starting %s, try %d: %v", bin, try, err)
	}
	dir := os.Getenv("DAY1_ARTIFACTS")
	keep := dir != "" || os.Getenv("DAY1_README_SHOT") != ""
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// shot saves a screenshot: always of a failure, and of each step when
	// DAY1_ARTIFACTS or DAY1_README_SHOT asks for them (each costs a PNG of the
	// whole window).
	shot = func(name string) {
		t.Helper()
		if !keep && !strings.HasPrefix(name, "failed") {
			return
		}
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
		if name == "diff" && os.Getenv("DAY1_README_SHOT") != "" {
			if err := os.WriteFile(os.Getenv("DAY1_README_SHOT"), png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if keep {
		t.Logf("screenshots in %s", dir)
	}
	return ctx, ts, c, shot
}

// TestInspector drives the inspector as a person would: the tree of the seeded
// memory, a diff with a conflict, a merge previewed and run, a trip back in time,
// and a write by another client appearing live.
func TestInspector(t *testing.T) {
	t.Parallel()
	ctx, ts, c, shot := browser(t)
	// A session on agent-a, with one fact of its own, for the session filter (agent-a
	// then has three changes).
	sess, err := c.StartSession(context.Background(), day1.Session{Branch: "agent-a", AgentID: "agent-a"})
	if err != nil {
		t.Fatal(err)
	}
	if res, body := do(t, ts, "POST", "/api/v1/facts", `{"branch":"agent-a","agent_id":"agent-a","session_id":"`+sess.ID+`","text":"Written in the session under test"}`); res.StatusCode != 201 {
		t.Fatalf("session write: %d %s", res.StatusCode, body)
	}
	run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		if err := chromedp.Do(sctx, actions...); err != nil {
			shot("failed")
			t.Fatalf("%s: %v", what, err)
		}
	}
	count := func(sel string) int {
		t.Helper()
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(`+quote(sel)+`).length`))
		if err != nil {
			t.Fatalf("count %s: %v", sel, err)
		}
		return n
	}
	// waitFor evaluates js until it is true, each time in the page's current context,
	// so that a page loaded meanwhile does not leave the wait on a context gone.
	waitFor := func(what, js string) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for {
			ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`!!(`+js+`)`))
			if err == nil && ok {
				return
			}
			if time.Now().After(deadline) {
				shot("failed")
				t.Fatalf("%s: %s is still not true (%v)", what, js, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// visit loads address anew (each address differs in its query, so that the page
	// loads rather than only changing its fragment).
	visit := func(what, address string) {
		t.Helper()
		run(what, chromedp.Navigate(address), chromedp.WaitVisible(chromedp.CSS(`#tabs`)))
	}

	// The tree: every branch, the earlier merge and the snapshot.
	run("open", chromedp.Navigate(ts.URL), chromedp.WaitVisible(chromedp.CSS(`text[data-branch="agent-a"]`)))
	waitFor("live", `document.getElementById("live").textContent === "live"`)
	// The header names the store and the embedder from /info.
	waitFor("the store", `/^memstore; embedder local-/.test(document.getElementById("store").textContent)`)
	for _, b := range []string{"main", "agent-a", "agent-b", "agent-c", "task/fix-auth", "task/fix-auth/investigator"} {
		if count(`text[data-branch="`+b+`"]`) != 1 {
			t.Errorf("branch %s is not in the tree", b)
		}
	}
	if count(`path[data-merge]`) != 1 || count(`path[data-snapshot="before-agents"]`) != 1 {
		t.Errorf("the tree lacks the merge or the snapshot")
	}
	// Task and agent branches are marked.
	if count(`text[data-branch="task/fix-auth"][data-role="task"]`) != 1 || count(`text[data-branch="task/fix-auth/investigator"][data-role="agent"]`) != 1 ||
		count(`text[data-branch="agent-a"][data-role]`) != 0 || count(`rect.badge.task`) != 1 || count(`circle.badge.agent`) < 1 {
		t.Errorf("task and agent branches are not marked")
	}
	// The time axis is labelled, from the earliest event, and a burst of forks
	// spreads out: the seeded branches were made within milliseconds of each other.
	if count(`#graph text.tick`) < 2 {
		t.Errorf("the tree's time axis has %d labels; want at least 2", count(`#graph text.tick`))
	}
	forks, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`[...document.querySelectorAll("#graph path.fork")].map(p => +p.getAttribute("d").slice(1).split(" ")[0]).sort((a, b) => a - b)`))
	if err != nil || len(forks) < 3 {
		t.Fatalf("fork positions %v, %v", forks, err)
	}
	for i := 1; i < len(forks); i++ {
		if forks[i]-forks[i-1] < 3 {
			t.Errorf("forks at x %v: two are %v apart; want each at least 3 px from the next", forks, forks[i]-forks[i-1])
			break
		}
	}
	shot("tree")

	// A record opened from the timeline shows its versions: agent-a's f-retry has
	// the one it inherited from main and its own.
	run("open agent-a", chromedp.Click(chromedp.CSS(`text[data-branch="agent-a"]`)))
	waitFor("agent-a timeline", `document.getElementById("tl-caption").textContent.includes("on agent-a")`)
	run("open f-retry", chromedp.Evaluate[chromedp.Void](`[...document.querySelectorAll("#tl-rows button")].find(b => b.textContent === "fact/f-retry").click()`))
	waitFor("versions", `document.querySelectorAll("#versions li").length === 2 && document.querySelector("#versions li").textContent.includes("timeline on main")`)
	shot("versions")

	// The session filter lists agent-a's sessions and keeps that session's records.
	waitFor("sessions listed", `[...document.getElementById("tl-session").options].some(o => o.value === `+quote(sess.ID)+`)`)
	run("pick session", chromedp.SetValue(chromedp.CSS(`#tl-session`), sess.ID),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("tl-session").dispatchEvent(new Event("change"))`))
	waitFor("session rows", `document.querySelectorAll("#tl-rows tr").length === 1 && document.getElementById("tl-rows").textContent.includes("session under test")`)
	run("any session", chromedp.SetValue(chromedp.CSS(`#tl-session`), ""),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("tl-session").dispatchEvent(new Event("change"))`))

	// A diff of the two agents shows their conflict.
	run("diff", chromedp.Click(chromedp.CSS(`#tab-diff`)),
		chromedp.SetValue(chromedp.CSS(`#diff-source`), "agent-b"), chromedp.SetValue(chromedp.CSS(`#diff-target`), "agent-a"),
		chromedp.Click(chromedp.CSS(`#diff-go`)), chromedp.WaitVisible(chromedp.CSS(`.conflict[data-conflict="fact/f-retry"]`)))
	// Merging them without a policy is refused, and says why.
	run("refused merge", chromedp.Click(chromedp.CSS(`#merge-run`)), chromedp.WaitVisible(chromedp.CSS(`#merge-out .error`)))

	// A cherry-pick of one ticked record of agent-b into main, previewed.
	run("diff agent-b", chromedp.SetValue(chromedp.CSS(`#diff-source`), "agent-b"), chromedp.SetValue(chromedp.CSS(`#diff-target`), "main"),
		chromedp.Click(chromedp.CSS(`#diff-go`)))
	waitFor("picks", `document.getElementById("diff-out").textContent.includes("Changes on main") && document.querySelectorAll("#diff-out input.pick").length > 1`)
	run("cherry-pick", chromedp.SetValue(chromedp.CSS(`#merge-strategy`), "cherry_pick"),
		chromedp.Click(chromedp.CSS(`#merge-preview`)), chromedp.WaitVisible(chromedp.CSS(`#merge-out .error`)),
		chromedp.Click(chromedp.CSS(`#diff-out input.pick`)), chromedp.Click(chromedp.CSS(`#merge-preview`)))
	waitFor("picked plan", `(() => { const p = document.querySelector(".plan[data-applied=false]"); return p && p.textContent.includes("cherry_pick; 1 merged"); })()`)
	shot("cherry-pick")
	run("native again", chromedp.SetValue(chromedp.CSS(`#merge-strategy`), "native"))

	// agent-a into main: previewed, then run.
	run("diff into main", chromedp.SetValue(chromedp.CSS(`#diff-source`), "agent-a"), chromedp.SetValue(chromedp.CSS(`#diff-target`), "main"),
		chromedp.Click(chromedp.CSS(`#diff-go`)))
	waitFor("diff shown", `document.getElementById("diff-out").textContent.includes("Changes on agent-a (3)")`)
	run("preview", chromedp.Focus(chromedp.CSS(`#merge-preview`)), chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.CSS(`.plan[data-applied="false"]`)))
	shot("diff")
	if count(`path[data-merge]`) != 1 {
		t.Fatal("a preview merged")
	}
	run("merge", chromedp.Focus(chromedp.CSS(`#merge-run`)), chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.CSS(`.plan[data-applied="true"]`)))
	waitFor("merge in the tree", `document.querySelectorAll("path[data-merge]").length === 2`)
	shot("merged")

	// Time travel: the slider's first point shows main before most of its facts.
	run("travel", chromedp.Click(chromedp.CSS(`#tab-travel`)))
	waitFor("head", `document.getElementById("travel-at").textContent === "main now" && document.querySelectorAll("#travel-rows tr").length > 1`)
	head := count(`#travel-rows tr`)
	run("back", chromedp.Evaluate[chromedp.Void](`(() => { const s = document.getElementById("travel-slider"); s.value = 0; s.dispatchEvent(new Event("input")); })()`))
	waitFor("past", `document.getElementById("travel-at").textContent.includes("as it was at 2025-03-01 09:00")`)
	waitFor("fewer facts", `document.querySelectorAll("#travel-rows tr").length === 1`)
	if head <= 1 {
		t.Errorf("main has %d facts at its head", head)
	}
	shot("time-travel")

	// A write by another client appears on the open timeline, live. The branch is
	// opened from the tree with the keyboard.
	run("open the timeline", chromedp.Click(chromedp.CSS(`#tab-timeline`)))
	// The live view may redraw the tree between the focus and the key: the two are
	// tried again (2 s each, the last try waitFor's time) until the timeline shows
	// the branch.
	shown := `document.getElementById("tl-caption").textContent.includes("on agent-b")`
	for try := 1; ; try++ {
		run("open agent-b", chromedp.Focus(chromedp.CSS(`text[data-branch="agent-b"]`)), chromedp.KeyEvent(kb.Enter))
		if try == 6 {
			waitFor("agent-b timeline", shown)
			break
		}
		if ok, err := chromedp.Run(ctx, chromedp.Poll[bool](`!!(`+shown+`)`, chromedp.WithPollingTimeout(2*time.Second))); err == nil && ok {
			break
		}
	}
	// The write comes from another process, as an agent's would.
	post := exec.Command(os.Args[0], "-test.run=^TestPostChild$", "-test.count=1")
	post.Env = append(os.Environ(), postChildURL+"="+ts.URL+"/api/v1/facts",
		postChildBody+`={"branch":"agent-b","agent_id":"agent-b","text":"A write from another client shows up live"}`)
	if out, err := post.CombinedOutput(); err != nil {
		t.Fatalf("the writing process: %v\n%s", err, out)
	}
	waitFor("live write", `[...document.querySelectorAll("#tl-rows tr.fresh")].some(r => r.textContent.includes("shows up live"))`)
	waitFor("feed", `document.getElementById("feed").textContent.includes("agent-b: changed")`)
	shot("live")

	// Search shows each retriever's score; tasks show their objectives and handoffs.
	run("search", chromedp.Click(chromedp.CSS(`#tab-search`)), chromedp.SendKeys(chromedp.CSS(`#search-q`), "token refresh\n"))
	waitFor("hits", `document.querySelectorAll("#search-rows tr").length > 1 && document.getElementById("search-rows").textContent.includes("#1")`+
		` && parseFloat(document.querySelector("#search-rows tr td:nth-child(2)").textContent) > 0`)
	waitFor("search link", `location.hash.includes("view=search") && location.hash.includes("q=token+refresh")`)
	run("tasks", chromedp.Click(chromedp.CSS(`#tab-tasks`)), chromedp.Click(chromedp.CSS(`#task-rows button`)))
	waitFor("task", `document.getElementById("task-out").textContent.includes("escalation from investigator to expert")`)
	waitFor("task link", `location.hash.includes("view=tasks") && location.hash.includes("task=fix-auth")`)
	shot("tasks")
	// The pending handoff is accepted from the page, by the agent it names.
	run("accept", chromedp.Click(chromedp.CSS(`#task-out .handoff-accept`)))
	waitFor("accepted", `document.getElementById("task-out").textContent.includes("escalation from investigator to expert: accepted")`)
	// Another is rejected, with a reason.
	if _, err := c.Handoff(context.Background(), day1.HandoffRequest{Task: "fix-auth", Type: day1.HandoffEscalation, FromAgent: "expert",
		ToAgent: "reviewer", Instructions: "Review the state machine"}); err != nil {
		t.Fatal(err)
	}
	run("reload the task", chromedp.Click(chromedp.CSS(`#task-rows button`)))
	waitFor("the new handoff", `document.querySelector("#task-out .handoff-reject") !== null`)
	run("reject", chromedp.SendKeys(chromedp.CSS(`#task-out .handoff-reason`), "not my area"), chromedp.Click(chromedp.CSS(`#task-out .handoff-reject`)))
	waitFor("rejected", `document.getElementById("task-out").textContent.includes("escalation from expert to reviewer: rejected")`)
	if hs, err := c.Handoffs(context.Background(), day1.HandoffFilter{Task: "fix-auth"}); err != nil || !slices.ContainsFunc(hs, func(h day1.HandoffRecord) bool {
		return h.ToAgent == "reviewer" && h.Status == day1.HandoffRejected
	}) {
		t.Errorf("the handoff to reviewer is not rejected in memory (%v)", err)
	}

	// A record shown on one branch is put away when the timeline switches branch.
	visit("timeline of agent-a", ts.URL+"/?panel=1#view=timeline&branch=agent-a")
	waitFor("agent-a's timeline", `document.querySelectorAll("#tl-rows button").length > 0`)
	run("open a record", chromedp.Click(chromedp.CSS(`#tl-rows button`)))
	waitFor("the record", `!document.getElementById("record").hidden`)
	run("switch branch", chromedp.SetValue(chromedp.CSS(`#tl-branch`), "main"), chromedp.Evaluate[chromedp.Void](`document.getElementById("tl-branch").dispatchEvent(new Event("change"))`))
	waitFor("the record put away", `document.getElementById("record").hidden`)

	// Time travel: a link names the point, and an empty branch says so.
	visit("travel link", ts.URL+"/?travel=1#view=travel&branch=main")
	waitFor("travel", `document.getElementById("travel-rows").children.length > 0 && document.getElementById("travel-at").textContent.includes("main now")`)
	run("the first point", chromedp.SetValue(chromedp.CSS(`#travel-slider`), "0"), chromedp.Evaluate[chromedp.Void](`document.getElementById("travel-slider").dispatchEvent(new Event("input"))`))
	waitFor("a past point's link", `location.hash.includes("view=travel") && location.hash.includes("at=")`)
	past, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.hash`))
	if err != nil {
		t.Fatal(err)
	}
	visit("the past point's link", ts.URL+"/?travel=2"+past)
	waitFor("the same point", `document.getElementById("travel-slider").value === "0" && document.getElementById("travel-at").textContent.includes("as it was at")`)

	// A 900 KB fact is cut in the diff, which stays short; its record shows it whole.
	if _, err := c.Branch(context.Background(), "huge", day1.BranchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WriteFact(context.Background(), day1.Fact{Branch: "huge", ID: "f-huge", Text: "A very long note " + strings.Repeat("with many words ", 900*1024/16)}); err != nil {
		t.Fatal(err)
	}
	visit("a diff of a huge fact", ts.URL+"/?huge=1#view=diff&source=huge&target=main")
	waitFor("the huge diff", `document.getElementById("diff-out").textContent.includes("Changes on huge (1)") && document.getElementById("diff-out").textContent.includes("A very long note")`)
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.getElementById("diff-out").textContent.length`)); err != nil || n > 20000 {
		t.Errorf("the diff of a 900 KB fact renders %d characters (%v); want it cut", n, err)
	}

	// A large diff is counted by kind and shown a page at a time.
	if _, err := c.Branch(context.Background(), "bulk", day1.BranchOptions{}); err != nil {
		t.Fatal(err)
	}
	bulk := make([]day1.Fact, 450)
	for i := range bulk {
		bulk[i] = day1.Fact{Branch: "bulk", Text: fmt.Sprintf("bulk fact number %d of the large diff", i)}
	}
	if _, err := c.WriteFacts(context.Background(), bulk); err != nil {
		t.Fatal(err)
	}
	visit("large diff", ts.URL+"/?link=bulk#view=diff&source=bulk&target=main")
	waitFor("first page", `document.querySelectorAll("#diff-out li.op-added").length === 200 && document.querySelector("#diff-out .counts").textContent.includes("450 fact added")`)
	run("more", chromedp.Click(chromedp.CSS(`#diff-out button.more`)))
	waitFor("second page", `document.querySelectorAll("#diff-out li.op-added").length === 400`)

	// Every view has a URL: a diff, a record and a search open from a link, in a new
	// page, as a person who was sent them would see them.
	for _, l := range []struct{ name, hash, ready string }{
		{"diff link", "#view=diff&source=agent-b&target=agent-a", `document.querySelector('.conflict[data-conflict="fact/f-retry"]') !== null && document.getElementById("p-diff").hidden === false`},
		{"record link", "#view=timeline&branch=agent-a&record=fact%2Ff-retry", `document.querySelectorAll("#versions li").length === 2 && document.getElementById("tl-caption").textContent.includes("on agent-a")`},
		{"search link", "#view=search&q=token+refresh", `document.getElementById("p-search").hidden === false && document.querySelectorAll("#search-rows tr").length > 1`},
		{"travel link", "#view=travel&branch=main", `document.getElementById("p-travel").hidden === false && document.getElementById("travel-at").textContent === "main now" && document.querySelectorAll("#travel-rows tr").length > 1`},
	} {
		// A new address each time (the query differs), so that the page loads anew.
		visit(l.name, ts.URL+"/?link="+strings.Fields(l.name)[0]+l.hash)
		waitFor(l.name, l.ready)
	}

	// A fact is corrected from its record: without a reason the API refuses and the
	// page says why; with one the new text is saved, then the fact is invalidated.
	visit("open f-db", ts.URL+"/?link=correct#view=timeline&branch=main&record=fact%2Ff-db")
	waitFor("correction form", `document.getElementById("correct-form") !== null`)
	run("no reason", chromedp.SetValue(chromedp.CSS(`#correct-text`), "Postgres 17 holds the user database"), chromedp.Click(chromedp.CSS(`#correct-update`)))
	waitFor("refused", `document.querySelector("#correct-out .error") !== null && document.getElementById("correct-out").textContent.includes("why: must say why")`)
	run("save", chromedp.SendKeys(chromedp.CSS(`#correct-why`), "upgraded on Monday"), chromedp.Click(chromedp.CSS(`#correct-update`)))
	waitFor("saved", `document.getElementById("correct-out").textContent.includes("Corrected: Postgres 17 holds the user database")`)
	shot("correct")
	run("invalidate", chromedp.Click(chromedp.CSS(`#correct-invalidate`)))
	waitFor("invalidated", `document.getElementById("correct-out").textContent.includes("(invalidated)")`)
	f, err := c.GetFact(context.Background(), "main", "f-db")
	if err != nil || f.Status != day1.FactInvalidated || f.Metadata["corrected_by"] != "inspector" || f.Metadata["correction_reason"] != "upgraded on Monday" {
		t.Errorf("f-db after the inspector's corrections: %+v, %v", f, err)
	}
	// A fact written from the page lands on the timeline's branch.
	visit("write", ts.URL+"/?link=write#view=timeline&branch=agent-c")
	waitFor("agent-c timeline", `document.getElementById("tl-caption").textContent.includes("on agent-c")`)
	run("write a fact", chromedp.SendKeys(chromedp.CSS(`#write-text`), "The inspector writes facts too\n"))
	waitFor("written", `document.getElementById("write-out").textContent.includes("created on agent-c") && document.getElementById("tl-rows").textContent.includes("The inspector writes facts too")`)

	// A diff of a branch with itself says so.
	visit("same branch", ts.URL+"/?link=same#view=diff&source=main&target=main")
	waitFor("same branch", `document.getElementById("diff-same") !== null`)

	// The entity graph: the most connected entity of main is drawn with its
	// neighbours; selecting a neighbour walks from it, and the link says so.
	if res, body := do(t, ts, "POST", "/api/v1/relations", `{"source":"postgres","target":"pgbouncer","type":"behind"}`); res.StatusCode != 201 {
		t.Fatalf("relation: %d %s", res.StatusCode, body)
	}
	visit("entities", ts.URL+"/?link=entities#view=entities&branch=main")
	waitFor("entity graph", `document.querySelectorAll("#entity-graph .node").length === 3 && document.querySelectorAll("#entity-graph .edge").length === 2`)
	shot("entities")
	run("walk from auth-service", chromedp.Click(chromedp.CSS(`#entity-graph .node[data-entity="auth-service"]`)))
	waitFor("walked", `document.querySelector("#entity-graph .node.root").dataset.entity === "auth-service" && location.hash.includes("entity=auth-service")`)
	run("depth 1", chromedp.SetValue(chromedp.CSS(`#entity-depth`), "1"), chromedp.Evaluate[chromedp.Void](`document.getElementById("entity-depth").dispatchEvent(new Event("change"))`))
	waitFor("depth 1", `document.querySelectorAll("#entity-graph .node").length === 2 && document.getElementById("entity-note").textContent.includes("2 entities and 1 relations")`)
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `\'`) + "'" }

// TestInspectorAsksForToken checks that a page opened without the token of a server
// that needs one asks for it, and shows the memory once it is given.
func TestInspectorAsksForToken(t *testing.T) {
	t.Parallel()
	token := strings.Repeat("t", MinTokenLen)
	ctx, ts, _, shot := browserWith(t, Options{Poll: 100 * time.Millisecond, Token: token})
	run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		if err := chromedp.Do(sctx, actions...); err != nil {
			shot("failed-token")
			t.Fatalf("%s: %v", what, err)
		}
	}
	run("open without the token", chromedp.Navigate(ts.URL), chromedp.WaitVisible(chromedp.CSS(`#token-form`)))
	shot("token")
	run("give it", chromedp.SendKeys(chromedp.CSS(`#token-input`), token+"\n"),
		chromedp.WaitVisible(chromedp.CSS(`text[data-branch="agent-a"]`)))
}

// TestInspectorLargeMemory opens the inspector on a branch of 20,000 facts: the
// timeline shows the newest page first, says older ones follow and shows them on
// request, and the diff of the branch with main counts its changes by kind and lists a
// page of them.
func TestInspectorLargeMemory(t *testing.T) {
	t.Parallel()
	ctx, ts, c, shot := browser(t)
	// More facts than one answer holds (store.MaxLimit), so that the pages below
	// must read past it; written a thousand at a time.
	const n = store.MaxLimit + 1000
	bg := context.Background()
	if _, err := c.Branch(bg, "big", day1.BranchOptions{}); err != nil {
		t.Fatal(err)
	}
	for lo := 0; lo < n; lo += 1000 {
		facts := make([]day1.Fact, 1000)
		for i := range facts {
			facts[i] = day1.Fact{Branch: "big", Text: fmt.Sprintf("Service %d of the large memory answers on port %d", lo+i, 10000+lo+i)}
		}
		if _, err := c.WriteFacts(bg, facts); err != nil {
			t.Fatal(err)
		}
	}
	run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := chromedp.Do(sctx, actions...); err != nil {
			shot("failed-large")
			t.Fatalf("%s: %v", what, err)
		}
	}
	waitFor := func(what, js string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`!!(`+js+`)`))
			if err == nil && ok {
				return
			}
			if time.Now().After(deadline) {
				shot("failed-large")
				t.Fatalf("%s: %s is still not true (%v)", what, js, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	run("open the timeline", chromedp.Navigate(ts.URL+"/#view=timeline&branch=big"))
	newest := fmt.Sprintf("Service %d of the large memory", n-1)
	waitFor("the newest page", `document.querySelectorAll("#tl-rows tr").length === 200 && document.querySelector("#tl-rows tr").textContent.includes(`+quote(newest)+`) && document.getElementById("tl-caption").textContent.includes("older ones follow")`)
	shot("large-timeline")
	run("show older", chromedp.Click(chromedp.CSS(`#tl-more`)))
	waitFor("two pages", `document.querySelectorAll("#tl-rows tr").length === 400`)
	// Past the most one answer holds, the page reads the timeline a page at a time:
	// every event once, newest first, down to the oldest.
	sctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	got, err := chromedp.Run(sctx, chromedp.Evaluate[[]string](`timelineEvents({branch: "big", order: "newest", kind: "fact"}, 10050).then((evs) => [String(evs.length), String(new Set(evs.map((e) => e.id)).size), evs[0].summary, evs[10049].summary])`, chromedp.EvalAwaitPromise))
	cancel()
	if err != nil || len(got) != 4 || got[0] != "10050" || got[1] != "10050" ||
		!strings.Contains(got[2], newest) || !strings.Contains(got[3], fmt.Sprintf("Service %d of the large memory", n-10050)) {
		t.Errorf("the timeline read in pages: %q, %v; want 10,050 distinct events from the newest down", got, err)
	}

	// The time slider reaches back to the first event, past the most one answer holds.
	run("open time travel", chromedp.Navigate(ts.URL+"/?travel=big#view=travel&branch=big"))
	waitFor("the slider", `+document.getElementById("travel-slider").max >= `+fmt.Sprint(n)+` && document.getElementById("travel-at").textContent.includes("big now")`)
	run("the first point", chromedp.SetValue(chromedp.CSS(`#travel-slider`), "0"), chromedp.Evaluate[chromedp.Void](`document.getElementById("travel-slider").dispatchEvent(new Event("input"))`))
	waitFor("the first point", `document.getElementById("travel-at").textContent.includes("as it was at")`)

	run("open the diff", chromedp.Navigate(ts.URL+"/?link=big#view=diff&source=big&target=main"))
	waitFor("the diff", `document.getElementById("diff-out").textContent.includes("Changes on big (`+fmt.Sprint(n)+`)") && document.getElementById("diff-out").textContent.includes("`+fmt.Sprint(n)+` fact added")`)
	if got, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#diff-out ul")[0].children.length`)); err != nil || got != 200 {
		t.Errorf("the diff lists %d changes at first (%v); want a page of 200", got, err)
	}
	shot("large-diff")
}
