package elfx

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/rocmdoctor/rocmdoctor/internal/saferio"
)

// The ELF dlopen metadata (systemd's specification, adopted by the UAPI
// group): notes of owner "FDO" and this type, in a section .note.dlopen,
// each holding a NUL-terminated JSON array of objects naming the
// libraries the file loads with dlopen() ("soname": an array of
// alternatives, most preferred first), and optionally the feature they
// provide, a description and a priority. rpm's and debhelper's dependency
// generators (package-notes' dlopen-notes.py) turn them into Requires,
// Recommends and Suggests.
const (
	NoteDlopenType  = 0x407c0c0a
	NoteDlopenOwner = "FDO"
)

// Priorities of a dlopen dependency; a declaration without one is
// DlopenRecommended.
const (
	DlopenRequired    = "required"
	DlopenRecommended = "recommended"
	DlopenSuggested   = "suggested"
)

// maxNoteBytes bounds what is read of one note segment or section: notes
// are a few hundred bytes (systemd's libsystemd-shared carries ~3 KB of
// dlopen notes); a size field beyond it is treated as malformed.
const maxNoteBytes = 1 << 20

// DlopenDep is one library a file declares it loads with dlopen().
type DlopenDep struct {
	// Sonames are the names it passes to dlopen(), alternatives in the
	// order it tries them (any one will do).
	Sonames     []string `json:"soname"`
	Feature     string   `json:"feature,omitempty"`
	Description string   `json:"description,omitempty"`
	// Priority is DlopenRequired, DlopenRecommended or DlopenSuggested
	// (DlopenRecommended when the declaration has none).
	Priority string `json:"priority"`
	// Offset is the file offset of the note that declares it.
	Offset int64 `json:"offset"`
}

// DlopenNotes returns the libraries the file declares in ELF dlopen
// metadata notes, read from its PT_NOTE segments (from its SHT_NOTE
// sections when it has no program headers: an object file), in file
// order. A note that does not follow the specification (a desc that is
// not NUL-terminated UTF-8 JSON, not an array of objects, an object
// without a "soname" array of names, an unknown priority) is reported in
// the error, a *FormatError at the note's offset; the declarations of the
// other notes are still returned. The packaging tools fail on such a file.
func (f *File) DlopenNotes() ([]DlopenDep, error) {
	type span struct{ off, size, align uint64 }
	var spans []span
	for _, p := range f.ef.Progs {
		if p.Type == elf.PT_NOTE {
			spans = append(spans, span{p.Off, p.Filesz, p.Align})
		}
	}
	if len(f.ef.Progs) == 0 {
		for _, s := range f.ef.Sections {
			if s.Type == elf.SHT_NOTE {
				spans = append(spans, span{s.Offset, s.FileSize, s.Addralign})
			}
		}
	}
	var out []DlopenDep
	var first error
	fail := func(err error) {
		if first == nil {
			first = err
		}
	}
	for _, sp := range spans {
		if sp.size == 0 {
			continue
		}
		if sp.size > maxNoteBytes || sp.off > uint64(f.Size) {
			fail(f.formatErr(int64(min(sp.off, uint64(f.Size))), "note segment", fmt.Errorf("%d bytes at offset 0x%x: beyond the file or the %d-byte limit", sp.size, sp.off, maxNoteBytes)))
			continue
		}
		b, err := saferio.ReadAt(f.r, f.Size, int64(sp.off), int64(sp.size), maxNoteBytes)
		if err != nil {
			fail(f.formatErr(int64(sp.off), "note segment", err))
			continue
		}
		err = walkNotes(b, f.bo, sp.align, func(n note) {
			if n.typ != NoteDlopenType || n.owner != NoteDlopenOwner {
				return
			}
			off := int64(sp.off) + int64(n.off)
			deps, err := parseDlopenNote(n.desc, off)
			out = append(out, deps...)
			if err != nil {
				fail(f.formatErr(off, "dlopen metadata note (FDO 0x407c0c0a)", err))
			}
		})
		if err != nil {
			fail(f.formatErr(int64(sp.off), "note segment", err))
		}
	}
	return out, first
}

// note is one ELF note: its owner (the name without its NUL), type and
// descriptor, at offset off of the bytes walkNotes was given.
type note struct {
	owner string
	typ   uint32
	desc  []byte
	off   int
}

// walkNotes calls fn for each note in b, a note segment or section whose
// alignment is align (8 for the 8-byte aligned notes of
// .note.gnu.property, else 4): the descriptor starts, and the next note
// begins, at that alignment. An error says where a note runs past the end;
// fn has seen the notes before it. Padding at the end (fewer bytes than a
// note header) is not an error.
func walkNotes(b []byte, bo binary.ByteOrder, align uint64, fn func(note)) error {
	a := uint64(4)
	if align == 8 {
		a = 8
	}
	up := func(x uint64) uint64 { return (x + a - 1) &^ (a - 1) }
	for off := uint64(0); uint64(len(b))-off >= 12; {
		h := b[off:]
		namesz, descsz, typ := uint64(bo.Uint32(h)), uint64(bo.Uint32(h[4:])), bo.Uint32(h[8:])
		descOff := up(12 + namesz)
		end := descOff + descsz
		if namesz > uint64(len(h)) || descsz > uint64(len(h)) || end > uint64(len(h)) {
			return fmt.Errorf("note at offset 0x%x: name of %d and descriptor of %d bytes run past the end (%d bytes left)", off, namesz, descsz, len(h))
		}
		fn(note{owner: string(bytes.TrimRight(h[12:12+namesz], "\x00")), typ: typ, desc: h[descOff:end], off: int(off)})
		off += min(up(end), uint64(len(h)))
	}
	return nil
}

// parseDlopenNote reads the JSON of one dlopen metadata note at offset off.
func parseDlopenNote(desc []byte, off int64) ([]DlopenDep, error) {
	text := bytes.TrimRight(desc, "\x00")
	if !utf8.Valid(text) {
		return nil, errors.New("its text is not UTF-8")
	}
	var objs []map[string]json.RawMessage
	if err := json.Unmarshal(text, &objs); err != nil || len(bytes.TrimSpace(text)) == 0 || bytes.TrimSpace(text)[0] != '[' {
		var top any
		if json.Unmarshal(text, &top) == nil {
			return nil, fmt.Errorf("its JSON is a %s, not an array of objects: %.120q", jsonKind(top), text)
		}
		return nil, fmt.Errorf("its text is not JSON (%v): %.120q", err, text)
	}
	var out []DlopenDep
	for i, o := range objs {
		d := DlopenDep{Priority: DlopenRecommended, Offset: off}
		raw, ok := o["soname"]
		if !ok {
			return out, fmt.Errorf("object %d has no \"soname\"", i)
		}
		if err := json.Unmarshal(raw, &d.Sonames); err != nil || len(d.Sonames) == 0 {
			return out, fmt.Errorf("object %d: \"soname\" is %s, not an array of library names", i, raw)
		}
		for _, s := range d.Sonames {
			if s == "" {
				return out, fmt.Errorf("object %d: \"soname\" has an empty name", i)
			}
		}
		for _, kv := range []struct {
			key string
			dst *string
		}{{"feature", &d.Feature}, {"description", &d.Description}, {"priority", &d.Priority}} {
			if raw, ok := o[kv.key]; ok {
				if err := json.Unmarshal(raw, kv.dst); err != nil {
					return out, fmt.Errorf("object %d: %q is %s, not a string", i, kv.key, raw)
				}
			}
		}
		switch d.Priority {
		case DlopenRequired, DlopenRecommended, DlopenSuggested:
		default:
			return out, fmt.Errorf("object %d: priority %q is none of required, recommended, suggested", i, d.Priority)
		}
		out = append(out, d)
	}
	return out, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "single object"
	case []any:
		return "array holding something other than objects"
	case string:
		return "string"
	case nil:
		return "null"
	}
	return "scalar"
}

// DlopenNames returns the library names that appear as strings in the
// file's read-only data (its allocated, non-writable, non-executable
// PROGBITS sections: .rodata and the like), in file order, each once:
// NUL-terminated file names of the form lib….so or lib….so.N…; absolute
// paths to such names as they are (dlopen() opens them without searching),
// and after a '/' in other strings the last element (a literal the linker
// merged into the tail of a longer one). For a file that calls dlopen() they are what
// it may pass to it, which no ELF structure records. It reads the section
// headers: a file opened without them (OpenSegments) has no names.
func (f *File) DlopenNames() ([]string, error) { return f.dlopenNames(false) }

// DlopenPathNames is DlopenNames restricted to names that end a path (an
// absolute one, or a template such as "%s/lib/%s/libjvm.so"): libraries
// the file loads by path, where no search path is involved. Names are
// file names (the path's last element).
func (f *File) DlopenPathNames() ([]string, error) { return f.dlopenNames(true) }

func (f *File) dlopenNames(pathsOnly bool) ([]string, error) {
	const context = maxLibName + 1
	window := f.reads.dlopenWindow
	var out []string
	seen := map[string]bool{}
	var buf []byte
	for _, s := range f.ef.Sections {
		if ok, err := f.readOnly(s); !ok {
			if err != nil {
				return out, err
			}
			continue
		}
		size := int64(s.Size)
		for pos := int64(0); pos < size; pos += window {
			lo, hi := max(0, pos-context), min(size, pos+window+context)
			if cap(buf) < int(hi-lo) {
				buf = make([]byte, min(size, window+2*context))
			}
			b := buf[:hi-lo]
			if err := saferio.ReadFull(f.r, b, int64(s.Offset)+lo); err != nil {
				return out, f.formatErr(int64(s.Offset)+lo, "section "+s.Name, err)
			}
			for i := 0; ; {
				j := bytes.Index(b[i:], []byte(".so"))
				if j < 0 {
					break
				}
				at := i + j
				i = at + 3
				if p := lo + int64(at); p < pos || p >= pos+window {
					continue // the neighbouring window's
				}
				name, ok := libNameAt(b, at, lo == 0)
				if pathsOnly {
					if !ok || !endsPath(b, at, name) {
						continue
					}
					name = filepath.Base(name)
				}
				if ok && !seen[name] {
					seen[name] = true
					out = append(out, name)
				}
			}
		}
	}
	return out, nil
}

// maxLibName bounds a library name DlopenNames takes (NAME_MAX).
const maxLibName = 255

// libNameAt reads the name around the ".so" at b[at:]: name characters back
// to a NUL or '/' (or b's start, when atStart says it is the section's),
// then ".so", any ".N" version parts, and a NUL. After a '/', the whole
// string when it is an absolute path (a Nix build patches
// dlopen("libamd_comgr.so.2") into the store path), else the last element.
func libNameAt(b []byte, at int, atStart bool) (string, bool) {
	end := at + 3
	for end < len(b) && b[end] == '.' {
		k := end + 1
		for k < len(b) && b[k] >= '0' && b[k] <= '9' {
			k++
		}
		if k == end+1 {
			return "", false
		}
		end = k
	}
	if end >= len(b) || b[end] != 0 {
		return "", false
	}
	start := at
	for start > 0 && nameByte(b[start-1]) {
		start--
	}
	switch {
	case start == 0 && !atStart, start > 0 && b[start-1] != 0 && b[start-1] != '/':
		return "", false
	case end-start > maxLibName || at-start <= 3 || string(b[start:start+3]) != "lib":
		return "", false
	}
	if start > 0 && b[start-1] == '/' {
		p := start - 1
		for p > 0 && (nameByte(b[p-1]) || b[p-1] == '/') {
			p--
		}
		if b[p] == '/' && (p > 0 && b[p-1] == 0 || p == 0 && atStart) && end-p <= maxLibName {
			return string(b[p:end]), true // an absolute path, which dlopen() opens as it is
		}
	}
	return string(b[start:end]), true
}

// endsPath reports whether name, which libNameAt read with its ".so" at
// b[at:], is an absolute path or the last element of another path.
func endsPath(b []byte, at int, name string) bool {
	if name[0] == '/' {
		return true
	}
	start := at - strings.Index(name, ".so")
	return start > 0 && b[start-1] == '/'
}

func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '+' || c == '-' || c == '.'
}

// CallsDlopen reports whether the table's file references dlopen or
// dlmopen: code that loads libraries by name at run time.
func (t *SymbolTable) CallsDlopen() bool { return len(t.UndefinedNamed("dlopen", "dlmopen")) > 0 }

// ReadOnlyContains reports whether needle occurs in the file's read-only
// data (its allocated, non-writable, non-executable PROGBITS sections),
// reading them a window at a time.
func (f *File) ReadOnlyContains(needle []byte) (bool, error) {
	if len(needle) == 0 {
		return true, nil
	}
	overlap := int64(len(needle) - 1)
	window := f.reads.dlopenWindow
	buf := make([]byte, 0, window+overlap)
	for _, s := range f.ef.Sections {
		if ok, err := f.readOnly(s); !ok {
			if err != nil {
				return false, err
			}
			continue
		}
		size := int64(s.Size)
		for pos := int64(0); pos < size; pos += window {
			hi := min(size, pos+window+overlap)
			b := buf[:hi-pos]
			if err := saferio.ReadFull(f.r, b, int64(s.Offset)+pos); err != nil {
				return false, f.formatErr(int64(s.Offset)+pos, "section "+s.Name, err)
			}
			if bytes.Contains(b, needle) {
				return true, nil
			}
		}
	}
	return false, nil
}

// readOnly reports whether s is read-only data (an allocated PROGBITS
// section, neither writable nor executable, not empty), and an error when
// it is but lies outside the file.
func (f *File) readOnly(s *elf.Section) (bool, error) {
	if s.Type != elf.SHT_PROGBITS || s.Flags&elf.SHF_ALLOC == 0 || s.Flags&(elf.SHF_WRITE|elf.SHF_EXECINSTR) != 0 || s.Size == 0 {
		return false, nil
	}
	if err := saferio.Check(f.Size, int64(s.Offset), int64(s.Size)); err != nil {
		return false, f.formatErr(int64(s.Offset), "section "+s.Name, err)
	}
	return true, nil
}
