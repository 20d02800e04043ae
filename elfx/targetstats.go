package elfx

import "sort"

// GPUTargetStat counts the code objects for one target and container.
type GPUTargetStat struct {
	TargetID          string `json:"target_id"`
	Kind              string `json:"kind,omitempty"` // bundle kind
	Container         string `json:"container"`
	CodeObjectVersion int    `json:"code_object_version,omitempty"`
	Count             int    `json:"count"`
}

// TargetStats groups code objects by target, kind and container, sorted.
func TargetStats(cos []CodeObject) []GPUTargetStat {
	type key struct {
		id, kind, container string
		cov                 int
	}
	counts := map[key]int{}
	for _, c := range cos {
		k := key{id: c.TargetID, kind: c.Kind, container: c.Container}
		if c.Target != nil {
			k.cov = c.Target.CodeObjectVersion
		}
		if k.id == "" {
			k.id = "unknown"
		}
		counts[k]++
	}
	out := make([]GPUTargetStat, 0, len(counts))
	for k, n := range counts {
		out = append(out, GPUTargetStat{TargetID: k.id, Kind: k.kind, Container: k.container, CodeObjectVersion: k.cov, Count: n})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.TargetID != b.TargetID {
			return a.TargetID < b.TargetID
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Container != b.Container {
			return a.Container < b.Container
		}
		return a.CodeObjectVersion < b.CodeObjectVersion
	})
	return out
}
