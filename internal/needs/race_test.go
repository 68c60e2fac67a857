//go:build race

package needs

// raceEnabled: the tests run with -race, and so do the go test runs they
// start (whose dependencies are then already built).
const raceEnabled = true
