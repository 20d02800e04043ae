// Package version compares dotted numeric versions the way CMake's
// VERSION_LESS and glibc's symbol versions order them: component by
// component as integers, missing components counting as 0 ("2.28" <
// "2.34" < "2.34.1"; "3.4.30" > "3.4.9").
package version

import (
	"strconv"
	"strings"
)

// Compare returns -1, 0 or +1 as a is older than, equal to or newer than b.
// Non-numeric components count as 0.
func Compare(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) || i < len(bs); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

// Less reports whether a is older than b.
func Less(a, b string) bool { return Compare(a, b) < 0 }
