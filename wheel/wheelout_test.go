package wheel

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/internal/dcopy"
	"github.com/rocmdoctor/rocmdoctor/internal/record"
)

// TestSortCentralDirectory: records written in one order come back in the
// order asked for, with and without the zip64 end records archive/zip
// writes past 65,535 entries; the archive stays readable.
func TestSortCentralDirectory(t *testing.T) {
	for _, n := range []int{5, 70000} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "x.zip")
			f, err := os.Create(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			zw := zip.NewWriter(f)
			// Written in reverse; order says where each belongs.
			order := make([]int, n)
			for k := 0; k < n; k++ {
				i := n - 1 - k
				w, err := zw.Create(fmt.Sprintf("e%06d", i))
				if err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(w, "%d", i)
				order[k] = i
			}
			if err := zw.Close(); err != nil {
				t.Fatal(err)
			}
			if err := sortCentralDirectory(f, order); err != nil {
				t.Fatal(err)
			}
			zr, err := zip.OpenReader(p)
			if err != nil {
				t.Fatal(err)
			}
			defer zr.Close()
			if len(zr.File) != n {
				t.Fatalf("%d entries, want %d", len(zr.File), n)
			}
			for i, zf := range zr.File {
				if zf.Name != fmt.Sprintf("e%06d", i) {
					t.Fatalf("entry %d is %s", i, zf.Name)
				}
				if i == 0 || i == n-1 {
					rc, err := zf.Open()
					if err != nil {
						t.Fatal(err)
					}
					var b [16]byte
					k, _ := rc.Read(b[:])
					rc.Close()
					if string(b[:k]) != strconv.Itoa(i) {
						t.Errorf("entry %d holds %q", i, b[:k])
					}
				}
			}
			// A count that does not match is an error, not a shuffle.
			if err := sortCentralDirectory(f, order[:n-1]); err == nil {
				t.Error("a short order list was accepted")
			}
		})
	}
}

// The RECORD digest of a patched file is computed on its own goroutine
// while the writer reads the file again; the line is refused when the two
// saw different sizes, and the digest is the file's SHA-256.
func TestFileDigest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lib.so")
	data := bytes.Repeat([]byte("rocm"), 700000)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	line, err := startDigest(path).line("pkg/lib.so", int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if want := record.Line("pkg/lib.so", record.Hash(data), int64(len(data))); line != want {
		t.Fatalf("line %q, want %q", line, want)
	}
	if _, err := startDigest(path).line("pkg/lib.so", int64(len(data))+1); err == nil || !strings.Contains(err.Error(), "changed while it was written") {
		t.Fatalf("a size mismatch gave %v", err)
	}
	if _, err := startDigest(path+".gone").line("pkg/lib.so", 0); err == nil {
		t.Fatal("a missing file gave a line")
	}
	// Cancelled, it has stopped or finished; finished, its line is right.
	dg := startDigest(path)
	dg.cancel()
	switch got, err := dg.line("pkg/lib.so", int64(len(data))); {
	case err != nil && !errors.Is(err, errDigestStopped):
		t.Fatalf("after cancel: %v", err)
	case err == nil && got != line:
		t.Fatalf("after cancel: line %q, want %q", got, line)
	}
}

// scanFile hands the same bytes whether it maps the file (a regular file)
// or reads it (a pipe, an empty file), in pieces of at most 1 MiB, and
// stops at fn's error.
func TestScanFile(t *testing.T) {
	data := make([]byte, 3<<20+12345)
	for i := range data {
		data[i] = byte(i * 7 / 3)
	}
	dir := t.TempDir()
	open := map[string]func() *os.File{
		"regular": func() *os.File {
			p := filepath.Join(dir, "lib.so")
			os.WriteFile(p, data, 0o644)
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			return f
		},
		"pipe": func() *os.File {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			go func() { w.Write(data); w.Close() }()
			return r
		},
	}
	defer func(w int64) { scanWindow = w }(scanWindow)
	for _, w := range []int64{1 << 20, 2 << 20, 4 << 20, 16 << 20} {
		scanWindow = w
		for name, opener := range open {
			testScan(t, fmt.Sprintf("%s, %d MiB windows", name, w>>20), opener, data)
		}
	}
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o644)
	f, err := os.Open(empty)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if n, err := scanFile(f, func([]byte) error { t.Error("a piece of an empty file"); return nil }); n != 0 || err != nil {
		t.Fatalf("empty file: %d, %v", n, err)
	}
}

// testScan checks one way of opening the data: all of it, then a stop.
func testScan(t *testing.T, name string, opener func() *os.File, data []byte) {
	f := opener()
	var got []byte
	n, err := scanFile(f, func(p []byte) error {
		if len(p) == 0 || len(p) > 1<<20 {
			t.Errorf("%s: a piece of %d bytes", name, len(p))
		}
		got = append(got, p...)
		return nil
	})
	f.Close()
	if err != nil || n != int64(len(data)) || !bytes.Equal(got, data) {
		t.Fatalf("%s: %d bytes, %v; equal %v", name, n, err, bytes.Equal(got, data))
	}
	f = opener()
	stop := errors.New("stop")
	calls := 0
	n, err = scanFile(f, func(p []byte) error {
		if calls++; calls == 2 {
			return stop
		}
		return nil
	})
	f.Close()
	if !errors.Is(err, stop) || calls != 2 || n != 1<<20 {
		t.Fatalf("%s: stopping at the second piece gave %d bytes, %v after %d calls", name, n, err, calls)
	}
}

// reusedHeader drops every zip64 field of an input entry (archive/zip
// writes the one the new archive needs), keeps the other extra fields in
// their order, drops a field that runs past the end, and gives an entry
// of 4 GiB or more a data descriptor for its 64-bit sizes.
func TestReusedHeader(t *testing.T) {
	field := func(id uint16, data ...byte) []byte {
		return append([]byte{byte(id), byte(id >> 8), byte(len(data)), 0}, data...)
	}
	ut := field(0x5455, 1, 2, 3, 4, 5)
	zip64 := field(zip64ExtraID, 8, 7, 6, 5, 4, 3, 2, 1)
	unix := field(0x7875, 1, 4, 0, 0, 0, 0, 4, 0, 0, 0, 0)
	pad := field(alignExtraID, 0, 16, 0, 0, 0) // an earlier relink's alignment: for the old layout
	var extra []byte
	for _, f := range [][]byte{zip64, ut, pad, zip64, unix} {
		extra = append(extra, f...)
	}
	small := zip.FileHeader{Name: "a", Extra: extra, CompressedSize64: 10, UncompressedSize64: 20}
	got := reusedHeader(small)
	if want := append(append([]byte{}, ut...), unix...); !bytes.Equal(got.Extra, want) {
		t.Errorf("extra % x, want % x", got.Extra, want)
	}
	if got.Flags&dataDescriptorFlag != 0 {
		t.Error("a small entry got a data descriptor")
	}
	if &small.Extra[0] == &got.Extra[0] || !bytes.Equal(small.Extra, extra) {
		t.Error("the input's header was changed")
	}
	// A field that claims more bytes than there are ends the extra data.
	cut := zip.FileHeader{Extra: append(append([]byte{}, ut...), 0x01, 0x00, 0x20, 0x00, 9)}
	if got := reusedHeader(cut); !bytes.Equal(got.Extra, ut) {
		t.Errorf("truncated field: extra % x, want % x", got.Extra, ut)
	}
	for _, big := range []zip.FileHeader{
		{CompressedSize64: 1 << 32, UncompressedSize64: 1 << 32},
		{CompressedSize64: 1 << 20, UncompressedSize64: 5 << 30},
		{CompressedSize64: 1<<32 - 1, UncompressedSize64: 1<<32 - 1},
	} {
		if got := reusedHeader(big); got.Flags&dataDescriptorFlag == 0 {
			t.Errorf("%d/%d bytes: no data descriptor", big.CompressedSize64, big.UncompressedSize64)
		}
	}
}

// docs/wheel-json.md names every field of the JSON plan.
func TestPlanJSONDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "wheel-json.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []any{Plan{}, FilePlan{}, Need{}} {
		typ := reflect.TypeOf(v)
		for i := range typ.NumField() {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			if name != "" && name != "-" && !bytes.Contains(doc, []byte("| `"+name+"` |")) {
				t.Errorf("docs/wheel-json.md does not document %s.%s (%q)", typ.Name(), typ.Field(i).Name, name)
			}
		}
	}
}

// alignExtra pads the extra field so that the data lands at the old
// offset modulo dcopy.Align, with a well-formed zipalign field of at least
// six bytes, and leaves it alone when nothing is needed or it would not fit.
func TestAlignExtra(t *testing.T) {
	ut := []byte{0x55, 0x54, 5, 0, 1, 2, 3, 4, 5}
	for _, c := range []struct{ headerOff, dataOff int64 }{
		{100, 4096 + 200}, {100, 109}, {100, 105}, {100, 104}, {4096*3 + 17, 4096 + 17 + 9}, {7, 3},
	} {
		got := alignExtra(ut, c.headerOff, c.dataOff)
		if (c.headerOff+int64(len(got))-c.dataOff)%dcopy.Align != 0 {
			t.Errorf("%+v: data at %d, not congruent with %d", c, c.headerOff+int64(len(got)), c.dataOff)
		}
		if !bytes.Equal(got[:len(ut)], ut) {
			t.Errorf("%+v: the existing fields changed", c)
		}
		rest := got[len(ut):]
		if len(rest) == 0 {
			continue
		}
		if len(rest) < 6 || binary.LittleEndian.Uint16(rest) != alignExtraID || int(binary.LittleEndian.Uint16(rest[2:]))+4 != len(rest) ||
			binary.LittleEndian.Uint16(rest[4:]) != dcopy.Align {
			t.Errorf("%+v: padding field % x", c, rest)
		}
	}
	if got := alignExtra(ut, 100, 100+int64(len(ut))); !bytes.Equal(got, ut) {
		t.Errorf("already aligned: % x", got)
	}
	long := make([]byte, 65535-100)
	if got := alignExtra(long, 0, 1); len(got) != len(long) {
		t.Errorf("a field past 64 KiB was added (%d bytes)", len(got))
	}
}

// A shortfall of space reads as one: bytes below a megabyte, above it the
// need rounded up and what is free rounded down.
func TestSpaceShortfallWording(t *testing.T) {
	for _, tt := range []struct {
		n          uint64
		need, have string
	}{
		{0, "0 bytes", "0 bytes"},
		{999_999, "999999 bytes", "999999 bytes"},
		{1_000_000, "1 MB", "1 MB"},
		{1_000_001, "2 MB", "1 MB"},
		{1_999_999, "2 MB", "1 MB"},
		{125_000_000_000, "125000 MB", "125000 MB"},
	} {
		if got := needed(tt.n); got != tt.need {
			t.Errorf("needed(%d) = %q, want %q", tt.n, got, tt.need)
		}
		if got := available(tt.n); got != tt.have {
			t.Errorf("available(%d) = %q, want %q", tt.n, got, tt.have)
		}
	}
}

// A disk that fills while libraries are staged says where they are
// staged and what to do; other errors pass as they are.
func TestRoomHint(t *testing.T) {
	full := &os.PathError{Op: "write", Path: "/tmp/x/lib.so", Err: syscall.ENOSPC}
	err := roomHint(full)
	if !errors.Is(err, syscall.ENOSPC) || !errors.Is(err, errNoRoom) ||
		err.Error() != "write /tmp/x/lib.so: no space left on device (native libraries are staged under $TMPDIR to be edited: set TMPDIR to a directory with more room)" {
		t.Errorf("roomHint(ENOSPC) = %v", err)
	}
	other := &os.PathError{Op: "write", Path: "/tmp/x/lib.so", Err: syscall.EIO}
	if err := roomHint(other); err != other {
		t.Errorf("roomHint(EIO) = %v, want it unchanged", err)
	}
	if roomHint(nil) != nil {
		t.Error("roomHint(nil) is not nil")
	}
}
