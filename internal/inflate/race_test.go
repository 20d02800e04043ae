//go:build race

package inflate

// raceDetector: the race detector makes decoding ~20x slower; tests that
// run goroutines over large inputs take a smaller share of them.
const raceDetector = true
