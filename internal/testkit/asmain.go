package testkit

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// AsMainEnv, set to 1 in the environment of a test binary, makes RunAsMain run the
// program instead of its tests.
const AsMainEnv = "DAY1_TEST_AS_MAIN"

// RunAsMain runs main, and exits, when the test binary was started as the program
// (AsMainEnv is 1); it returns at once otherwise. A TestMain calls it first, before
// it parses flags, so that Program can run the test binary as the program.
func RunAsMain(main func()) {
	if os.Getenv(AsMainEnv) != "1" {
		return
	}
	main()
	os.Exit(0)
}

// RemovePrograms removes the programs Program built; a TestMain calls it after the
// tests.
func RemovePrograms() {
	if built.path != "" {
		os.RemoveAll(filepath.Dir(built.path))
	}
}

var built struct {
	once sync.Once
	path string
	err  error
}

// Program returns how to run the program of the package under test (a main package
// whose TestMain calls RunAsMain) as a process of its own: the path to run and the
// environment entries to add. It is the test binary itself, which holds the program,
// so that nothing is built; under the race detector, whose programs run several
// times slower, the program is built once without it instead.
func Program(t testing.TB) (path string, env []string) {
	t.Helper()
	if !raceEnabled {
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		return exe, []string{AsMainEnv + "=1"}
	}
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "day1-program")
		if err != nil {
			built.err = err
			return
		}
		built.path = filepath.Join(dir, "program")
		if runtime.GOOS == "windows" {
			built.path += ".exe"
		}
		if out, err := exec.Command("go", "build", "-o", built.path, ".").CombinedOutput(); err != nil {
			built.err = errors.New(string(out))
		}
	})
	if built.err != nil {
		t.Fatalf("building the program: %v", built.err)
	}
	return built.path, nil
}
