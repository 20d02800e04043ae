package cli

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
)

var escapes = twwidth.Filter() // what takes no room

// visible is s without colour escapes and without white space: what no
// wrapping may lose or add.
func visible(s string) string {
	return strings.Join(strings.Fields(escapes.ReplaceAllString(s, "")), "")
}

func TestWrapCell(t *testing.T) {
	for _, tt := range []struct {
		in    string
		width int
		want  string
	}{
		{"short", 10, "short"},
		{"undefined symbol: gone_plain (lib/libmissing.so)", 20, "undefined symbol:\ngone_plain\n(lib/libmissing.so)"},
		// A word longer than the column breaks after '/', '_' and the like.
		{"/work/main/testdata/checktree/ck/lib/libdevice_gemm_operations_gone.a does not exist", 24,
			"/work/main/testdata/\nchecktree/ck/lib/\nlibdevice_gemm_\noperations_gone.a does\nnot exist"},
		// With nowhere to break, anywhere.
		{"abcdefghijklmnopqrstuvwxyz", 10, "abcdefghij\nklmnopqrst\nuvwxyz"},
		// Lines already there are kept, each wrapped.
		{"one two three\nfour", 8, "one two\nthree\nfour"},
		// A coloured span is closed at each line end and opened again.
		{"\x1b[31merror: the file is truncated\x1b[0m", 12, "\x1b[31merror: the\x1b[0m\n\x1b[31mfile is\x1b[0m\n\x1b[31mtruncated\x1b[0m"},
		{"gfx90a ×2; \x1b[31merror: bad\x1b[0m", 12, "gfx90a ×2;\n\x1b[31merror: bad\x1b[0m"},
		// A reset that comes with the space broken at ends the colour there.
		{"\x1b[31merror\x1b[0m more text", 8, "\x1b[31merror\x1b[0m\nmore\ntext"},
		{"plain \x1b[33mwarning here\x1b[0m", 8, "plain\n\x1b[33mwarning\x1b[0m\n\x1b[33mhere\x1b[0m"},
		// An empty first line stays a line.
		{"\nabcdefghijkl", 10, "\nabcdefghij\nkl"},
	} {
		got := wrapCell(tt.in, tt.width)
		if got != tt.want {
			t.Errorf("wrapCell(%q, %d) =\n%q\nwant\n%q", tt.in, tt.width, got, tt.want)
		}
		for _, l := range strings.Split(got, "\n") {
			if w := twwidth.Width(l); w > tt.width {
				t.Errorf("wrapCell(%q, %d): line %q is %d wide", tt.in, tt.width, l, w)
			}
		}
		if visible(got) != visible(tt.in) {
			t.Errorf("wrapCell(%q, %d) changed the text: %q", tt.in, tt.width, got)
		}
	}
}

func TestFitTable(t *testing.T) {
	header := []string{"ID", "SEVERITY", "FILE", "MESSAGE", "FIX"}
	rows := [][]string{
		{"RD1001", "\x1b[31merror\x1b[0m", "ck/lib/libconsumer.so", "undefined symbol: _ZN2ck16tensor_operation6device8instance65add_device_grouped_conv2d_fwd_xdl_nhwgc_gkyxc_nhwgk_f16_instancesERi (testdata/checktree/ck/lib/libconsumer.so)", "link the library that defines it (see --index), or add it to NEEDED"},
		{"RD1206", "error", "lib/libexecstack.so", "testdata/checktree/lib/libexecstack.so: executable stack (PT_GNU_STACK has PF_X)", "Link with -z noexecstack."},
	}
	for _, width := range []int{60, 80, 100, 132} {
		h, fitted := fitTable(header, rows, width)
		total := 1
		for i := range h {
			w := cellWidth(h[i])
			for _, r := range fitted {
				w = max(w, cellWidth(r[i]))
			}
			total += w + 3
		}
		if total > width {
			t.Errorf("width %d: the table is %d wide", width, total)
		}
		for k, r := range fitted {
			for i, c := range r {
				if visible(c) != visible(rows[k][i]) {
					t.Errorf("width %d: cell %q became %q", width, rows[k][i], c)
				}
			}
		}
		if h[0] != "ID" || fitted[0][0] != "RD1001" || fitted[0][1] != rows[0][1] {
			t.Errorf("width %d: narrow columns were wrapped: %q %q", width, h, fitted[0][:2])
		}
	}
	// A table that fits, or a terminal too narrow for any table, is left
	// as it is.
	small := [][]string{{"a", "b"}}
	if _, got := fitTable([]string{"X", "Y"}, small, 80); got[0][0] != "a" || got[0][1] != "b" {
		t.Errorf("a table that fits changed: %q", got)
	}
	if _, got := fitTable(header, rows, 30); got[0][3] != rows[0][3] {
		t.Errorf("a terminal of 30 columns: the table was wrapped")
	}
}

// TestTableFitsTheTerminal: a terminal's width bounds the table drawn on it.
func TestTableFitsTheTerminal(t *testing.T) {
	var out bytes.Buffer
	s := NewStreams(nil, &out, &bytes.Buffer{}, true, true)
	s.SetWidth(72)
	long := strings.Repeat("a long message that goes on ", 12)
	if err := s.Table([]string{"FILE", "MESSAGE"}, [][]string{{"lib/libfoo.so", long}}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if len(lines) < 6 {
		t.Errorf("the message was not wrapped:\n%s", out.String())
	}
	for _, l := range lines {
		if w := twwidth.Width(l); w > 72 {
			t.Errorf("line %d wide: %q", w, l)
		}
	}
	t.Setenv("COLUMNS", "90")
	if got := columnsFromEnv(); got != 90 {
		t.Errorf("COLUMNS=90: %d", got)
	}
	for _, v := range []string{"", "abc", "0", "12", "-5"} {
		t.Setenv("COLUMNS", v)
		if got := columnsFromEnv(); got != 0 {
			t.Errorf("COLUMNS=%q: %d, want 0 (not a usable width)", v, got)
		}
	}
}

func BenchmarkFitTable(b *testing.B) {
	header := []string{"ID", "SEVERITY", "FILE", "MESSAGE", "FIX"}
	var rows [][]string
	for range 200 {
		rows = append(rows, []string{"RD1001", "\x1b[31merror\x1b[0m", "lib/x86_64-linux-gnu/libLLVM-15.so.1",
			"undefined symbol: _ZN2ck16tensor_operation6device8instance65add_device_grouped_conv2d_fwd_xdl_nhwgc_gkyxc_nhwgk_f16_instancesERi (/usr/lib/x86_64-linux-gnu/libconsumer.so), expected from libdevice_conv_operations.so",
			"link the library that defines it (see --index), or add it to NEEDED"})
	}
	for b.Loop() {
		fitTable(header, rows, 120)
	}
}

// FuzzWrapCell: wrapping never loses or adds a visible character, and
// no line is wider than the column (every character here fits one).
func FuzzWrapCell(f *testing.F) {
	f.Add("undefined symbol: _ZN2ck16tensor_operation (lib/libfoo.so)", 12)
	f.Add("\x1b[31merror\x1b[0m more \x1b[1mbold text\x1b[0m and ×2 gfx90a:xnack-", 7)
	f.Add("a\n\nb  c   d\x1b[", 3)
	f.Fuzz(func(t *testing.T, s string, w int) {
		if w < 2 || w > 200 || !utf8.ValidString(s) {
			return
		}
		got := wrapCell(s, w)
		if visible(got) != visible(s) {
			t.Fatalf("wrapCell(%q, %d) = %q: the text changed", s, w, got)
		}
		for _, l := range strings.Split(got, "\n") {
			if width := twwidth.Width(l); width > w && cellWidth(s) > w {
				for _, r := range escapes.ReplaceAllString(l, "") {
					if twwidth.Width(string(r)) > 1 || r < 0x20 {
						return // a character wider than one column, or a control one
					}
				}
				t.Fatalf("wrapCell(%q, %d): line %q is %d wide", s, w, l, width)
			}
		}
	})
}

// TestProgressFitsTheTerminal: a progress line longer than the terminal is
// cut from its start, so that it never wraps (a wrapped line is not
// overwritten by the next one).
func TestProgressFitsTheTerminal(t *testing.T) {
	var errOut bytes.Buffer
	s := NewStreams(nil, &bytes.Buffer{}, &errOut, false, true)
	s.SetErrWidth(30)
	s.Progress("[12/2247] ", "/usr/lib/x86_64-linux-gnu/libLLVM-15.so.1")
	s.Progress("[13/2247] ", "libé.so")
	s.SetErrWidth(8)
	s.Progress("[14/2247] ", "libfoo.so")
	s.Progress("", "")
	want := "\r\x1b[K[12/2247] …nu/libLLVM-15.so.1\r\x1b[K[13/2247] libé.so\r\x1b[K[14/224\r\x1b[K"
	if got := errOut.String(); got != want {
		t.Errorf("progress = %q, want %q", got, want)
	}
	if n := utf8.RuneCountInString("[12/2247] …nu/libLLVM-15.so.1"); n != 29 { // the width less one
		t.Fatalf("bad test: %d", n)
	}
}
