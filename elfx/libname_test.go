package elfx

import "testing"

// TestLibNameAt: which strings around a ".so" are library names, and what
// of them: the name, an absolute path as it is, the last element of any
// other string with a '/'.
func TestLibNameAt(t *testing.T) {
	for _, c := range []struct {
		in      string
		atStart bool
		want    string
		path    bool // the name ends a path (DlopenPathNames)
	}{
		{"\x00libfoo.so.1\x00", false, "libfoo.so.1", false},
		{"libfoo.so\x00", true, "libfoo.so", false},
		{"libfoo.so\x00", false, "", false}, // the window's start, not the section's: the name may go on before it
		{"\x00libfoo-2.0.so.12.3\x00", false, "libfoo-2.0.so.12.3", false},
		{"\x00/nix/store/0123-comgr-6.0/lib/libamd_comgr.so.2\x00", false, "/nix/store/0123-comgr-6.0/lib/libamd_comgr.so.2", true},
		{"/opt/rocm/lib/libhsa.so\x00", true, "/opt/rocm/lib/libhsa.so", true},
		{"\x00see lib/libx.so\x00", false, "libx.so", true},
		{"\x00rel/dir/libx.so.1\x00", false, "libx.so.1", true},
		{"\x00%s/lib/%s/libjvm.so\x00", false, "libjvm.so", true}, // the JDK launcher's template
		{"\x00\x01libfoo.so\x00", false, "", false},
		{"\x00libfoo.so.1x\x00", false, "", false},
		{"\x00libfoo.so.\x00", false, "", false},
		{"\x00libfoo.so", false, "", false},
		{"\x00lib.so\x00", false, "", false},
		{"\x00foo.so\x00", false, "", false},
		{"\x00libfoo.sox\x00", false, "", false},
	} {
		b := []byte(c.in)
		at := -1
		for i := len(b) - 3; i >= 0; i-- {
			if string(b[i:i+3]) == ".so" {
				at = i
				break
			}
		}
		got, ok := libNameAt(b, at, c.atStart)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("%q: %q, %v; want %q", c.in, got, ok, c.want)
		}
		if ok && endsPath(b, at, got) != c.path {
			t.Errorf("%q: endsPath %v, want %v", c.in, !c.path, c.path)
		}
	}
}
