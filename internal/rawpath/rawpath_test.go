package rawpath

import "testing"

func TestJoinAndDir(t *testing.T) {
	for _, c := range []struct{ dir, name, want string }{
		{"/opt/rocm/lib", "libamdhip64.so.6", "/opt/rocm/lib/libamdhip64.so.6"},
		{"/opt/rocm/lib//", "x.so", "/opt/rocm/lib/x.so"},
		{"/", "x.so", "/x.so"},
		{"//", "x.so", "/x.so"},
		{"/a/link/../lib", "x.so", "/a/link/../lib/x.so"},
		{"./a/.", "x.so", "./a/./x.so"},
		{"", "x.so", "x.so"},
	} {
		if got := Join(c.dir, c.name); got != c.want {
			t.Errorf("Join(%q, %q) = %q, want %q", c.dir, c.name, got, c.want)
		}
	}
	for _, c := range []struct{ path, want string }{
		{"/a/link/../lib/x.so", "/a/link/../lib"},
		{"/x.so", "/"},
		{"x.so", "."},
		{"a/b", "a"},
	} {
		if got := Dir(c.path); got != c.want {
			t.Errorf("Dir(%q) = %q, want %q", c.path, got, c.want)
		}
	}
}
