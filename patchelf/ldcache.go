package patchelf

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"sort"
	"strings"
)

// NixOS's resolution cache (patchelf's --build-resolution-cache): a note
// that records, for each NEEDED library the loader searches for, where the
// run path finds it, so that the glibc loader Nixpkgs patches opens it
// without walking the run path. The name, type and descriptor are those of
// NixOS patchelf's buildResolutionCache (src/patchelf.cc); the loader
// patch reads the note through its PT_NOTE.
const (
	ldCacheSection = ".note.nixos.ldcache"
	ldCacheOwner   = "NixOS"
	ntNixOSLDCache = 0x63a86cb6
)

// ldcache is what a plan does about the note: the existing one's section
// index (-1 for none), whether it goes, and the new note's bytes.
type ldcache struct {
	old    int
	remove bool
	note   []byte
}

// planLDCache decides, with patchelf's rules: an edit that changed the run
// path or the NEEDED set removes an existing note (it would resolve to the
// old paths); --build-resolution-cache writes one unless there is nothing
// to resolve (a warning, no note), leaves an identical one alone, and
// refuses to replace a different one (rebuild from an unpatched file).
func (m *model) planLDCache(p *Plan) (ldcache, error) {
	lc := ldcache{old: -1}
	if !m.pseudo {
		for i, s := range m.secs {
			if s.Name == ldCacheSection {
				lc.old = i
				break
			}
		}
	}
	present := lc.old >= 0
	if present && m.cacheStale {
		lc.remove, present = true, false
	}
	if !m.buildCache {
		return lc, nil
	}
	nothing := func(why string) (ldcache, error) {
		if present {
			return lc, &Error{Path: m.path, Msg: "--build-resolution-cache: a resolution cache note is already present; rebuild from an unpatched binary"}
		}
		p.Warnings = append(p.Warnings, "--build-resolution-cache: "+why+"; no cache written")
		return lc, nil
	}
	if m.dyn == nil {
		return nothing("no dynamic section (statically linked?)")
	}
	var needed []string
	for _, e := range m.ents {
		if e.tag == elf.DT_NEEDED {
			needed = append(needed, e.str)
		}
	}
	runPath, _, _ := m.rpath() // DT_RUNPATH, else DT_RPATH, as the loader
	dirs := strings.Split(runPath, ":")
	if runPath == "" || len(needed) == 0 {
		return nothing("no DT_NEEDED entries or run path to resolve")
	}
	// Each searched name (one without a slash: a path is opened as it is)
	// against each directory, first to last: "=PATH" where the file is
	// readable, "?DIR" for a directory only the loader can search (one
	// with a $ORIGIN-style token, or with a glibc-hwcaps subdirectory that
	// may hold a variant for the CPU it runs on).
	cache := map[string][]string{}
	for _, dir := range dirs {
		if dir == "" {
			continue // the working directory at run time: nothing to record
		}
		_, err := os.Stat(dir + "/glibc-hwcaps")
		hint := strings.Contains(dir, "$") || err == nil
		for _, lib := range needed {
			switch {
			case strings.Contains(lib, "/"):
			case hint:
				cache[lib] = append(cache[lib], "?"+dir)
			case readable(dir + "/" + lib):
				cache[lib] = append(cache[lib], "="+dir+"/"+lib)
			}
		}
	}
	if len(cache) == 0 {
		return nothing("no libraries resolved against the run path")
	}
	libs := make([]string, 0, len(cache))
	for lib := range cache {
		libs = append(libs, lib)
	}
	sort.Strings(libs)
	var desc []byte
	for _, lib := range libs {
		desc = append(append(desc, lib...), 0)
		desc = append(append(desc, strings.Join(cache[lib], ":")...), 0)
	}
	desc = append(desc, 0)
	if present {
		if bytes.Equal(m.noteDesc(m.secs[lc.old]), desc) {
			return lc, nil // built already: nothing to do
		}
		return nothing("")
	}
	lc.note = encodeNote(m.bo, ldCacheOwner, ntNixOSLDCache, desc)
	return lc, nil
}

// readable reports whether the file at p can be opened for reading.
func readable(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	f.Close()
	return true
}

// encodeNote lays out one note: its header, the owner's name with its NUL
// padded to 4 bytes, the descriptor padded to 4.
func encodeNote(bo binary.ByteOrder, owner string, typ uint32, desc []byte) []byte {
	name := append([]byte(owner), 0)
	b := make([]byte, 12, 12+len(name)+len(desc)+6)
	bo.PutUint32(b, uint32(len(name)))
	bo.PutUint32(b[4:], uint32(len(desc)))
	bo.PutUint32(b[8:], typ)
	b = append(b, name...)
	b = append(b, make([]byte, align(uint64(len(b)), 4)-uint64(len(b)))...)
	b = append(b, desc...)
	return append(b, make([]byte, align(uint64(len(b)), 4)-uint64(len(b)))...)
}

// noteDesc is the descriptor of the first note in section s, nil when it
// does not parse within the section.
func (m *model) noteDesc(s *elf.Section) []byte {
	if s.Size < 12 || s.Type == elf.SHT_NOBITS {
		return nil
	}
	b, err := readAt(m.f, int64(s.Offset), int(min(s.Size, 1<<20)))
	if err != nil {
		return nil
	}
	nameSz, descSz := uint64(align(uint64(m.bo.Uint32(b)), 4)), uint64(m.bo.Uint32(b[4:]))
	if nameSz > uint64(len(b))-12 || descSz > uint64(len(b))-12-nameSz {
		return nil
	}
	return b[12+nameSz : 12+nameSz+descSz]
}
