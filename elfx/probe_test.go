package elfx_test

import (
	"bytes"
	"debug/elf"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

// TestProbe: one open classifies a file, and an ELF file goes on to be
// parsed from the same descriptor with the same identity os.Stat reports.
func TestProbe(t *testing.T) {
	path := testenv.Testdata("libbe.so")
	p, err := elfx.OpenProbe(path)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(path)
	if p.Kind() != elfx.KindELF || !bytes.Equal(p.Head, want[:min(len(want), 4096)]) {
		t.Fatalf("Kind %v, head %d bytes", p.Kind(), len(p.Head))
	}
	st, _ := os.Stat(path)
	if p.Info.Size() != st.Size() || p.Info.Mode() != st.Mode() || !p.Info.ModTime().Equal(st.ModTime()) || p.Info.Name() != st.Name() {
		t.Errorf("Info %v %v %v %v, os.Stat %v %v %v %v", p.Info.Name(), p.Info.Size(), p.Info.Mode(), p.Info.ModTime(), st.Name(), st.Size(), st.Mode(), st.ModTime())
	}
	if !sameSys(p.Info, st) {
		t.Errorf("Sys = %T, want the same *syscall.Stat_t os.Stat gives", p.Info.Sys())
	}
	if id := elfx.IDOf(p.Info); id == (elfx.FileID{}) || id != elfx.IDOf(st) {
		t.Errorf("IDOf = %v, os.Stat's %v", id, elfx.IDOf(st))
	}
	f, err := p.ELF()
	if err != nil {
		t.Fatal(err)
	}
	if f.Machine == 0 || f.FileInfo() != p.Info {
		t.Errorf("parsed %v, FileInfo %v", f.Machine, f.FileInfo())
	}
	if _, err := f.Dynamic(); err != nil {
		t.Error(err)
	}
	if err := f.Close(); err != nil {
		t.Error(err)
	}
	if _, err := p.ELF(); err == nil {
		t.Error("a used Probe parsed again")
	}
	if err := p.Close(); err != nil {
		t.Errorf("Close after ELF: %v", err)
	}

	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	os.WriteFile(text, []byte("hi"), 0o644)
	p, err = elfx.OpenProbe(text)
	if err != nil {
		t.Fatal(err)
	}
	if p.Kind() != elfx.KindOther || string(p.Head) != "hi" {
		t.Errorf("text file: Kind %v, head %q", p.Kind(), p.Head)
	}
	if _, err := p.ELF(); !errors.Is(err, elfx.ErrNotELF) {
		t.Errorf("ELF() of a text file: %v", err)
	}
	p.Close()

	p, err = elfx.OpenProbe(testenv.Testdata("libgnu.a"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Kind() != elfx.KindArchive {
		t.Errorf("libgnu.a: Kind %v", p.Kind())
	}
	// The archive parse goes on from the probe's descriptor and gives the
	// same archive as OpenArchive.
	a, err := p.Archive()
	if err != nil {
		t.Fatal(err)
	}
	ref, err := elfx.OpenArchive(testenv.Testdata("libgnu.a"))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Members) == 0 || len(a.Members) != len(ref.Members) || len(a.Symbols) != len(ref.Symbols) {
		t.Errorf("probed archive: %d members, %d symbols; OpenArchive: %d, %d", len(a.Members), len(a.Symbols), len(ref.Members), len(ref.Symbols))
	}
	if f, err := a.OpenELF(0); err != nil {
		t.Errorf("member 0 of the probed archive: %v", err)
	} else {
		f.Close()
	}
	a.Close()
	ref.Close()
	if _, err := p.Archive(); err == nil {
		t.Error("a used-up probe parsed again")
	}
	if _, err := p.ReadAt(make([]byte, 1), 0); err == nil {
		t.Error("ReadAt after Archive succeeded")
	}
	// Not an archive: an error naming the file, descriptor released.
	p, err = elfx.OpenProbe(text)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Archive(); err == nil || !strings.Contains(err.Error(), text) {
		t.Errorf("Archive() of a text file: %v", err)
	}
	p.Close()
	if _, err := p.ReadAt(make([]byte, 1), 0); err == nil {
		t.Error("ReadAt after Close succeeded")
	}
	if _, err := elfx.OpenProbe(dir); err == nil {
		t.Error("a directory was probed")
	}
	if _, err := elfx.OpenProbe(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// TestProbeReadAt: reads through a Probe behave like os.File.ReadAt at
// every interesting offset, including short reads at the end.
func TestProbeReadAt(t *testing.T) {
	path := testenv.Testdata("libMIOpen.so")
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := elfx.OpenProbe(path)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	n := int64(len(want))
	for _, c := range []struct{ off, len int64 }{{0, 8}, {4090, 20}, {n - 5, 5}, {n - 5, 10}, {n, 1}, {n + 100, 4}, {0, n}, {1, 3 * 4096}} {
		b := make([]byte, c.len)
		got, err := p.ReadAt(b, c.off)
		end := min(c.off+c.len, n)
		wantN := max(end-c.off, 0)
		if int64(got) != wantN || !bytes.Equal(b[:got], want[min(c.off, n):end]) {
			t.Errorf("ReadAt(%d, %d) = %d bytes, want %d", c.len, c.off, got, wantN)
		}
		if (wantN < c.len) != (err == io.EOF) {
			t.Errorf("ReadAt(%d, %d): err %v", c.len, c.off, err)
		}
	}
}

// TestProbeType: the type read from the head matches the parsed header,
// in both byte orders; not ELF is ET_NONE.
func TestProbeType(t *testing.T) {
	for _, name := range []string{"libfoo.so.1", "libbe.so", "i386.o", "be.o", "hello", "libgnu.a"} {
		p, err := elfx.OpenProbe(testenv.Testdata(name))
		if err != nil {
			t.Fatal(err)
		}
		got := p.Type()
		p.Close()
		want := elf.ET_NONE
		if f, err := elfx.Open(testenv.Testdata(name)); err == nil {
			want = f.Type
			f.Close()
		}
		if got != want || (name != "libgnu.a" && got == elf.ET_NONE) {
			t.Errorf("%s: Type() = %v, header says %v", name, got, want)
		}
	}
}

// HostLoadable tells host shared objects and executables from device code
// objects, relocatable objects and other files by the first 20 bytes;
// what it cannot tell counts as loadable.
func TestHostLoadable(t *testing.T) {
	head := func(name string) []byte {
		b, err := os.ReadFile(testenv.Testdata(name))
		if err != nil {
			t.Fatal(err)
		}
		return b[:min(len(b), elfx.HostHeaderLen)]
	}
	for _, c := range []struct {
		name string
		hdr  []byte
		want bool
	}{
		{"x86-64 shared object", head("libfoo.so.1"), true},
		{"x86-64 executable", head("hello"), true},
		{"i386 shared object", head("libi386.so"), true},
		{"big-endian shared object", head("libbe.so"), true},
		{"AMDGPU code object", head("k-gfx90a_xnackoff.co"), false},
		{"AMDGPU relocatable object", head("k-gfx803.o"), false},
		{"x86-64 relocatable object", head("archive_a.o"), false},
		{"archive", head("libgnu.a"), false},
		{"text", []byte("#!/bin/sh\necho not an ELF file\n"), false},
		{"magic only", []byte("\x7fELF"), true},
		{"no data encoding", append([]byte("\x7fELF\x02\x00\x01"), make([]byte, 13)...), true},
		{"undefined type", append(append([]byte("\x7fELF\x02\x01\x01"), make([]byte, 9)...), 0xff, 0xff, 0x3e, 0x00), true},
		{"core file", append(append([]byte("\x7fELF\x02\x01\x01"), make([]byte, 9)...), 4, 0, 0x3e, 0x00), false},
		{"empty", nil, false},
	} {
		if got := elfx.HostLoadable(c.hdr); got != c.want {
			t.Errorf("%s: HostLoadable = %v, want %v", c.name, got, c.want)
		}
	}
}
