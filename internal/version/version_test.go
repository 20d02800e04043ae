package version

import "testing"

func TestCompare(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"2.28", "2.34", -1}, {"2.34", "2.34.0", 0}, {"2.34.1", "2.34", 1}, {"3.4.30", "3.4.9", 1}, {"6.2.2", "6.10", -1}, {"", "0", 0},
	} {
		if got := Compare(c.a, c.b); got != c.want {
			t.Errorf("Compare(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := Less(c.a, c.b); got != (c.want < 0) {
			t.Errorf("Less(%q, %q) = %v", c.a, c.b, got)
		}
	}
}
