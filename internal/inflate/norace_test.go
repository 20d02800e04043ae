//go:build !race

package inflate

const raceDetector = false
