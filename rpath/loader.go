package rpath

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"io"
	"path/filepath"
	"strings"

	"github.com/rocmdoctor/rocmdoctor/elfx"
)

// LoaderSetup is what a glibc dynamic loader has compiled in and ld.so
// searches with: its trusted directories (SYSTEM_DIRS, from glibc's
// configured slibdir and libdir: /lib/x86_64-linux-gnu/, … on Debian, the
// glibc's own store path on Nix and Guix) and the ld.so.cache it reads
// (/etc/ld.so.cache, or the store path's etc/ld.so.cache that Nix's glibc
// is patched to read, which does not exist). A program is resolved with
// the setup of its own interpreter: a Nix-built program on a Debian host
// does not search /usr/lib/x86_64-linux-gnu or read /etc/ld.so.cache, and
// a library found only there is missing where the program runs.
type LoaderSetup struct {
	Dirs  []string // trusted directories, in order, without their trailing slash ("/" stays)
	Cache string   // the ld.so.cache path ("" when not found)
}

// maxLoader bounds what ReadLoaderSetup reads of a loader without section
// headers (glibc's is ~200 KB).
const maxLoader = 8 << 20

// ReadLoaderSetup reads the setup compiled into the glibc loader at path
// (the file itself: its links resolved, as a store path's own lib/
// directory is recognised by it).
// The trusted directories are glibc's system_dirs string, NUL-separated
// absolute paths that end in '/', recognised by the array of their lengths
// (system_dirs_len, size_t) stored next to it; the cache is the string that
// ends in "/ld.so.cache". ok is false when the file is not such a loader
// (musl's, a stand-in, anything unreadable): then the usual directories
// for the machine are searched.
func ReadLoaderSetup(path string) (s LoaderSetup, ok bool) {
	return readLoaderSetup(path, filepath.Dir(path))
}

// readLoaderSetup is ReadLoaderSetup for the loader file at path, which
// lies in ownDir as the loader sees its file system (inside a sysroot).
func readLoaderSetup(path, ownDir string) (s LoaderSetup, ok bool) {
	f, err := elfx.Open(path)
	if err != nil {
		return s, false
	}
	defer f.Close()
	var data []byte
	if sec := f.ELF().Section(".rodata"); sec != nil && sec.Type != elf.SHT_NOBITS && sec.Size <= maxLoader {
		data, err = sec.Data()
	} else if f.Size <= maxLoader {
		data = make([]byte, f.Size)
		_, err = io.ReadFull(io.NewSectionReader(f.ReaderAt(), 0, f.Size), data)
	}
	if err != nil || len(data) == 0 {
		return s, false
	}
	word := 8
	if f.Class == elf.ELFCLASS32 {
		word = 4
	}
	var order binary.ByteOrder = binary.LittleEndian
	if f.Data == elf.ELFDATA2MSB {
		order = binary.BigEndian
	}
	s.Dirs = systemDirs(data, word, order, ownDir)
	s.Cache = cachePath(data)
	return s, len(s.Dirs) > 0
}

// systemDirs finds glibc's system_dirs in data: a run of NUL-terminated
// strings that start and end with '/', whose size_t lengths
// (system_dirs_len) are stored as an array too: right before the first
// string or right after the last (x86-64 Debian), or elsewhere in data
// (x32), which is trusted for two strings or more, or for one that is the
// directory the loader itself is in (Nix's and Guix's glibc, whose one
// trusted directory is its own lib/). The first run that has them is the
// one.
func systemDirs(data []byte, word int, order binary.ByteOrder, ownDir string) []string {
	type str struct {
		off int
		s   string
	}
	dirLike := func(s string) bool {
		if len(s) < 1 || s[0] != '/' || s[len(s)-1] != '/' {
			return false
		}
		for i := 0; i < len(s); i++ {
			if s[i] < 0x21 || s[i] > 0x7e {
				return false
			}
		}
		return true
	}
	lengths := func(run []str) []byte {
		b := make([]byte, len(run)*word)
		for k, r := range run {
			if word == 8 {
				order.PutUint64(b[k*word:], uint64(len(r.s)))
			} else {
				order.PutUint32(b[k*word:], uint32(len(r.s)))
			}
		}
		return b
	}
	at := func(off int, want []byte) bool {
		return off >= 0 && off+len(want) <= len(data) && bytes.Equal(data[off:off+len(want)], want)
	}
	anywhere := func(want []byte) bool {
		for from := 0; from+len(want) <= len(data); {
			i := bytes.Index(data[from:], want)
			if i < 0 {
				return false
			}
			if (from+i)%word == 0 {
				return true
			}
			from += i + 1
		}
		return false
	}
	found := func(run []str) []string {
		// Every sub-run, longest first: other strings may end or begin
		// the run that system_dirs is part of.
		for size := len(run); size > 0; size-- {
			for i := 0; i+size <= len(run); i++ {
				sub := run[i : i+size]
				want := lengths(sub)
				end := sub[size-1].off + len(sub[size-1].s) + 1
				after := (end + word - 1) / word * word
				ok := at(sub[0].off-len(want), want) || at(after, want)
				if !ok && (size >= 2 || strings.TrimSuffix(sub[0].s, "/") == ownDir) {
					ok = anywhere(want)
				}
				if ok {
					out := make([]string, size)
					for k, r := range sub {
						out[k] = r.s
						if len(out[k]) > 1 {
							out[k] = strings.TrimSuffix(out[k], "/")
						}
					}
					return out
				}
			}
		}
		return nil
	}
	var run []str
	for off := 0; off < len(data); {
		end := bytes.IndexByte(data[off:], 0)
		if end < 0 {
			break
		}
		s, at := string(data[off:off+end]), off
		if i := strings.LastIndexFunc(s, func(r rune) bool { return r < 0x21 || r > 0x7e }); i >= 0 {
			// Glued to binary bytes before it (a big-endian length's
			// last byte): the string is what follows them.
			s, at = s[i+1:], at+i+1
		}
		if dirLike(s) {
			run = append(run, str{at, s})
		} else if len(run) > 0 {
			if dirs := found(run); dirs != nil {
				return dirs
			}
			run = run[:0]
		}
		off += end + 1
	}
	if len(run) > 0 {
		return found(run)
	}
	return nil
}

// cachePath is the first NUL-terminated absolute path in data that ends in
// "/ld.so.cache".
func cachePath(data []byte) string {
	const name = "/ld.so.cache\x00"
	for from := 0; ; {
		i := bytes.Index(data[from:], []byte(name))
		if i < 0 {
			return ""
		}
		i += from
		start := bytes.LastIndexByte(data[:i], 0) + 1
		if s := string(data[start : i+len(name)-1]); strings.HasPrefix(s, "/") {
			return s
		}
		from = i + len(name)
	}
}
