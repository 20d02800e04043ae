//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package cli

// terminalWidth is 0 where rocmdoctor does not ask the terminal: $COLUMNS
// still applies.
func terminalWidth(uintptr) int { return 0 }
