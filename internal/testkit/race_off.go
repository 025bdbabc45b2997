//go:build !race

package testkit

// raceEnabled says the tests run under the race detector.
const raceEnabled = false
