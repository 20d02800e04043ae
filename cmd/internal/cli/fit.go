package cli

import (
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
)

// columnsFromEnv is $COLUMNS when it holds a usable width, else 0. The
// shells keep it at the terminal's width, and a user sets it to ask for
// another one (as ls and git do).
func columnsFromEnv() int {
	n, err := strconv.Atoi(strings.TrimSpace(os.Getenv("COLUMNS")))
	if err != nil || n < minTableWidth {
		return 0
	}
	return n
}

// ttyWidth is the width of the terminal on fd: $COLUMNS when set, else
// what the terminal says.
func ttyWidth(fd uintptr) int {
	if n := columnsFromEnv(); n > 0 {
		return n
	}
	return terminalWidth(fd)
}

// minTableWidth is the narrowest width fitTable aims at: below it the
// table is left as wide as it is.
const minTableWidth = 40

// fitTable wraps the cells of a table whose natural width exceeds width
// (box-drawn, one space of padding: each column costs its text and three
// characters, the table one more), so that it fits a terminal of that
// width: the widest columns give up room first, each keeping at least its
// header's width (and 8), and text wraps at spaces, then after '/', '_',
// ',', '-', '.', ':' or ';' inside a word too long for its column (paths,
// mangled names), then anywhere. Colour escapes take no room and are
// carried over to each line they span. Without room for every column at
// its least width the table is returned as it is.
func fitTable(header []string, rows [][]string, width int) ([]string, [][]string) {
	n := len(header)
	for _, r := range rows {
		n = max(n, len(r))
	}
	if n == 0 || width < minTableWidth {
		return header, rows
	}
	natural := make([]int, n)
	least := make([]int, n)
	for i := range n {
		least[i] = 8
	}
	for i, h := range header {
		natural[i] = max(natural[i], cellWidth(h))
		least[i] = max(least[i], cellWidth(h))
	}
	for _, r := range rows {
		for i, c := range r {
			natural[i] = max(natural[i], cellWidth(c))
		}
	}
	budget := width - 3*n - 1
	total, floor := 0, 0
	for i := range n {
		least[i] = min(least[i], natural[i])
		total += natural[i]
		floor += least[i]
	}
	if total <= budget || floor > budget {
		return header, rows
	}
	// The largest cap at which the columns fit: each column is as wide as
	// its text, the cap or its least width, whichever is in between.
	widths := func(c int) (w []int, sum int) {
		w = make([]int, n)
		for i := range n {
			w[i] = max(least[i], min(natural[i], c))
			sum += w[i]
		}
		return w, sum
	}
	lo, hi := 1, 1
	for i := range n {
		hi = max(hi, natural[i])
	}
	for lo < hi { // the largest c with sum(c) <= budget
		mid := (lo + hi + 1) / 2
		if _, s := widths(mid); s <= budget {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	w, sum := widths(lo)
	for i := 0; i < n && sum < budget; i++ { // what the cap left over
		if w[i] < natural[i] {
			w[i]++
			sum++
		}
	}
	var wr wrapper
	wrapRow := func(r []string) []string {
		out := make([]string, len(r))
		for i, c := range r {
			out[i] = wr.wrap(c, w[i])
		}
		return out
	}
	fitted := make([][]string, len(rows))
	for k, r := range rows {
		fitted[k] = wrapRow(r)
	}
	return wrapRow(header), fitted
}

// cellWidth is the display width of a cell's widest line.
func cellWidth(s string) int {
	w := 0
	for line := range strings.SplitSeq(s, "\n") {
		w = max(w, twwidth.Width(line))
	}
	return w
}

// glyph is one character as wrapCell places it: line[lo:hi] is its text,
// with the escape sequences that come before it, and width its display
// width.
type glyph struct {
	lo, hi int
	width  int
	space  bool // a place to break, dropped at the break
	after  bool // a place to break after, inside a word
}

// wrapCell wraps each line of s to width w (see fitTable).
func wrapCell(s string, w int) string {
	var wr wrapper
	return wr.wrap(s, w)
}

// wrapper is wrapCell with its glyphs kept for the next cell.
type wrapper struct{ gs []glyph }

func (wr *wrapper) wrap(s string, w int) string {
	if cellWidth(s) <= w {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	sgr := "" // the colour in effect where the next line starts
	gs := wr.gs
	defer func() { wr.gs = gs[:0] }()
	lines := 0
	// A space dropped at a break keeps the escapes that came with it.
	drop := func(line string, g glyph) string {
		t := line[g.lo : g.hi-1]
		if t != "" {
			sgr = colourAfter(sgr, t)
		}
		return t
	}
	put := func(line string, l []glyph) { // one line of the result
		end := len(l)
		for end > 0 && l[end-1].space {
			end--
		}
		if lines > 0 {
			b.WriteByte('\n')
		}
		lines++
		b.WriteString(sgr)
		for _, g := range l[:end] {
			t := line[g.lo:g.hi]
			b.WriteString(t)
			if strings.IndexByte(t, 0x1b) >= 0 {
				sgr = colourAfter(sgr, t)
			}
		}
		for _, g := range l[end:] {
			b.WriteString(drop(line, g))
		}
		if sgr != "" {
			b.WriteString("\x1b[0m")
		}
	}
	for line := range strings.SplitSeq(s, "\n") {
		gs = glyphs(line, gs[:0])
		start, curW := 0, 0
		for i := 0; i < len(gs); i++ {
			g := gs[i]
			for curW+g.width > w && i > start {
				k := breakAt(gs[start:i])
				if k <= 0 {
					k = i - start
				}
				put(line, gs[start:start+k])
				start += k
				for start < i && gs[start].space {
					drop(line, gs[start])
					start++
				}
				curW = 0
				for _, h := range gs[start:i] {
					curW += h.width
				}
			}
			if i == start && start > 0 && g.space {
				drop(line, g) // a line does not start with the space it broke at
				start++
				continue
			}
			curW += g.width
		}
		put(line, gs[start:])
	}
	return b.String()
}

// breakAt is where a line of cur ends: after its last space, else after
// its last break character, 0 for nowhere.
func breakAt(cur []glyph) int {
	for k := len(cur) - 1; k > 0; k-- {
		if cur[k].space {
			return k
		}
	}
	for k := len(cur) - 1; k > 0; k-- {
		if cur[k-1].after {
			return k
		}
	}
	return 0
}

// glyphs appends the characters of line to out, each with the escape
// sequences before it (trailing ones are a glyph of no width).
func glyphs(line string, out []glyph) []glyph {
	lo := 0
	for i := 0; i < len(line); {
		if j := escapeEnd(line, i); j > i {
			i = j
			continue
		}
		r, size := utf8.DecodeRuneInString(line[i:])
		w := 1 // printable ASCII, nearly all there is
		if r < 0x20 || r >= 0x7f {
			w = twwidth.Width(line[i : i+size])
		}
		out = append(out, glyph{lo: lo, hi: i + size, width: w, space: r == ' ', after: strings.ContainsRune("/_,-.:;", r)})
		i += size
		lo = i
	}
	if lo < len(line) { // escapes after the last character
		out = append(out, glyph{lo: lo, hi: len(line)})
	}
	return out
}

// escapeEnd is the end of the escape sequence at line[i], i when there is
// none: the sequences tablewriter gives no width, CSI (ESC [, parameter
// and intermediate bytes, a final byte) and OSC (ESC ], up to BEL or
// ESC \\). Any other escape byte is a character of its own.
func escapeEnd(line string, i int) int {
	if i+1 >= len(line) || line[i] != 0x1b {
		return i
	}
	switch line[i+1] {
	case '[':
		j := i + 2
		for j < len(line) && line[j] >= 0x30 && line[j] <= 0x3f {
			j++
		}
		for j < len(line) && line[j] >= 0x20 && line[j] <= 0x2f {
			j++
		}
		if j < len(line) && line[j] >= 0x40 && line[j] <= 0x7e {
			return j + 1
		}
	case ']':
		for j := i + 2; j < len(line); j++ {
			if line[j] == 0x07 {
				return j + 1
			}
			if line[j] == 0x1b && j+1 < len(line) && line[j+1] == '\\' {
				return j + 2
			}
		}
	}
	return i
}

// colourAfter is the colour in effect after text, given the one before
// it: SGR sequences (ESC [ … m) accumulate, a reset clears them.
func colourAfter(sgr, text string) string {
	for i := 0; i < len(text); {
		j := escapeEnd(text, i)
		if j == i {
			i++
			continue
		}
		if seq := text[i:j]; seq[1] == '[' && seq[len(seq)-1] == 'm' {
			if seq == "\x1b[0m" || seq == "\x1b[m" {
				sgr = ""
			} else {
				sgr += seq
			}
		}
		i = j
	}
	return sgr
}
