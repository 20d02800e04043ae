package wheel

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/internal/record"
)

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
	for _, w := range []int64{1 << 20, 2 << 20, 4 << 20, 16 << 20} {
		for name, opener := range open {
			testScan(t, fmt.Sprintf("%s, %d MiB windows", name, w>>20), w, opener, data)
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
func testScan(t *testing.T, name string, window int64, opener func() *os.File, data []byte) {
	f := opener()
	var got []byte
	n, err := scanFileIn(f, window, func(p []byte) error {
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
	n, err = scanFileIn(f, window, func(p []byte) error {
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
