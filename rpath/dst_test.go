package rpath

import "testing"

// TestExpandDST: the tokens glibc's _dl_dst_substitute replaces, and what
// it leaves alone.
func TestExpandDST(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"/usr/lib", "/usr/lib"},
		{"$ORIGIN", "/o"},
		{"$ORIGIN/../lib", "/o/../lib"},
		{"${ORIGIN}/lib", "/o/lib"},
		{"${ORIGIN}lib", "/olib"},
		{"$ORIGIN-x:$ORIGIN.y", "/o-x:/o.y"},
		{"$ORIGINAL/lib", "$ORIGINAL/lib"},
		{"$ORIGIN_1", "$ORIGIN_1"},
		{"$ORIGIN9", "$ORIGIN9"},
		{"${ORIGIN", "${ORIGIN"},
		{"${ORIGINAL}", "${ORIGINAL}"},
		{"/p/$LIB/$PLATFORM", "/p/lib64/haswell"},
		{"/p/${LIB}x/${PLATFORM}", "/p/lib64x/haswell"},
		{"/p/$LIBS", "/p/$LIBS"},
		{"/p/$HOME/$", "/p/$HOME/$"},
		{"$$ORIGIN", "$/o"},
		{"", ""},
	} {
		if got := expandDST(tt.in, "/o", "lib64", "haswell"); got != tt.want {
			t.Errorf("expandDST(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestOriginRelative(t *testing.T) {
	for e, want := range map[string]bool{
		"$ORIGIN": true, "$ORIGIN/../lib": true, "${ORIGIN}/lib": true, "${ORIGIN}": true,
		"$ORIGINAL/lib": false, "$ORIGIN_x": false, "${ORIGIN": false, "$LIB/x": false, "/usr/lib": false,
		"lib/$ORIGIN": false, "": false, "$": false,
	} {
		if got := OriginRelative(e); got != want {
			t.Errorf("OriginRelative(%q) = %v, want %v", e, got, want)
		}
	}
}
