//go:build race

package runner

// raceEnabled: the tests run under the race detector, where a process
// started from the test binary takes a good part of a second to start.
const raceEnabled = true
