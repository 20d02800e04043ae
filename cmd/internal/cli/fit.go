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
	wrapRow := func(r []string) []string {
		out := make([]string, len(r))
		for i, c := range r {
			out[i] = wrapCell(c, w[i])
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

// glyph is one character as wrapCell places it: its text, with the
// escape sequences that come before it, and its display width.
type glyph struct {
	text  string
	width int
	space bool // a place to break, dropped at the break
	after bool // a place to break after, inside a word
}

// wrapCell wraps each line of s to width w (see fitTable).
func wrapCell(s string, w int) string {
	if cellWidth(s) <= w {
		return s
	}
	var out []string
	sgr := "" // the colour in effect where the next line starts
	for line := range strings.SplitSeq(s, "\n") {
		var lines [][]glyph
		var cur []glyph
		curW := 0
		emit := func(k int) { // the first k glyphs of cur make a line
			l := cur[:k]
			for len(l) > 0 && l[len(l)-1].space {
				l = l[:len(l)-1]
			}
			lines = append(lines, l)
			rest := cur[k:]
			for len(rest) > 0 && rest[0].space {
				rest = rest[1:]
			}
			cur, curW = append([]glyph(nil), rest...), 0
			for _, g := range cur {
				curW += g.width
			}
		}
		for _, g := range glyphs(line) {
			for curW+g.width > w && len(cur) > 0 {
				k := breakAt(cur)
				if k <= 0 {
					k = len(cur)
				}
				emit(k)
			}
			cur = append(cur, g)
			curW += g.width
		}
		lines = append(lines, cur)
		for _, l := range lines {
			var b strings.Builder
			b.WriteString(sgr)
			for _, g := range l {
				b.WriteString(g.text)
				sgr = colourAfter(sgr, g.text)
			}
			if sgr != "" {
				b.WriteString("\x1b[0m")
			}
			out = append(out, b.String())
		}
	}
	return strings.Join(out, "\n")
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

// glyphs splits a line into characters, each with the escape sequences
// before it (trailing ones join the last character).
func glyphs(line string) []glyph {
	var out []glyph
	pending := ""
	for i := 0; i < len(line); {
		if line[i] == 0x1b {
			j := escapeEnd(line, i)
			pending += line[i:j]
			i = j
			continue
		}
		r, size := utf8.DecodeRuneInString(line[i:])
		text := line[i : i+size]
		out = append(out, glyph{text: pending + text, width: twwidth.Width(text), space: r == ' ', after: strings.ContainsRune("/_,-.:;", r)})
		pending = ""
		i += size
	}
	if pending != "" {
		if len(out) == 0 {
			return []glyph{{text: pending}}
		}
		out[len(out)-1].text += pending
	}
	return out
}

// escapeEnd is the end of the escape sequence at line[i]: a CSI sequence
// (ESC [ … final byte), else the escape and the byte after it.
func escapeEnd(line string, i int) int {
	if i+1 < len(line) && line[i+1] == '[' {
		for j := i + 2; j < len(line); j++ {
			if line[j] >= 0x40 && line[j] <= 0x7e {
				return j + 1
			}
		}
		return len(line)
	}
	return min(i+2, len(line))
}

// colourAfter is the colour in effect after text, given the one before
// it: SGR sequences accumulate, a reset clears them.
func colourAfter(sgr, text string) string {
	for i := 0; i < len(text); {
		if text[i] != 0x1b {
			i++
			continue
		}
		j := escapeEnd(text, i)
		if seq := text[i:j]; strings.HasSuffix(seq, "m") {
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
