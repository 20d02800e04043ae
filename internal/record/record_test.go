package record

import (
	"strconv"
	"strings"
	"testing"
)

// RECORD is CSV: paths with commas or quotes are quoted, quotes doubled;
// what Line writes Parse reads back, CRLF line ends included.
func TestParse(t *testing.T) {
	paths := []string{"pkg/lib.so", `pkg/a,b.so`, `pkg/say "hi".so`, `pkg/"q",x`}
	var b strings.Builder
	for i, p := range paths {
		b.WriteString(Line(p, "sha256=abc"+strconv.Itoa(i), int64(i+1)) + "\r\n")
	}
	b.WriteString(Line("pkg-1.0.dist-info/RECORD", "", 0) + "\n\n")
	// Written by hand, not by csv: a bare quote is kept, not a reason to
	// stop reading.
	b.WriteString(`pkg/bare"quote.so,sha256=zz,9` + "\n")
	got := Parse(b.String())
	if len(got) != len(paths)+2 || got[len(paths)+1] != (Entry{`pkg/bare"quote.so`, "sha256=zz", "9"}) {
		t.Fatalf("a bare quote: %+v", got)
	}
	got = got[:len(paths)+1]
	if len(got) != len(paths)+1 {
		t.Fatalf("%d records, want %d: %+v", len(got), len(paths)+1, got)
	}
	for i, p := range paths {
		if want := (Entry{p, "sha256=abc" + strconv.Itoa(i), strconv.Itoa(i + 1)}); got[i] != want {
			t.Errorf("record %d = %+v, want %+v", i, got[i], want)
		}
	}
	if last := got[len(paths)]; last != (Entry{"pkg-1.0.dist-info/RECORD", "", ""}) {
		t.Errorf("RECORD's own line = %+v", last)
	}
}

// FuzzParse: any RECORD text parses without panicking; every path read
// back from the line Line writes for it is the same path; NewVerifier and
// Mismatch take any hash and size fields.
func FuzzParse(f *testing.F) {
	f.Add("pkg/lib.so,sha256=AVTFPZpEKzuHr7OvQZmhaU3LvwKz06AJw8mT_pNh2yI,3144\npkg-1.0.dist-info/RECORD,,\n")
	f.Add("\"a,\"\"b\",md5=x,1\r\n,,\nx,sha512=====,-1\n")
	f.Fuzz(func(t *testing.T, s string) {
		for _, e := range Parse(s) {
			if e.Path != "" && !strings.ContainsAny(e.Path, "\r") {
				got := Parse(Line(e.Path, "sha256=x", 1) + "\n")
				if len(got) != 1 || got[0].Path != e.Path {
					t.Fatalf("path %q read back as %+v", e.Path, got)
				}
			}
			if v, err := NewVerifier(e); err == nil {
				v.Write([]byte(s))
				v.Mismatch()
			}
		}
	})
}
