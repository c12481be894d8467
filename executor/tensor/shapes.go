package tensor

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// ParseShapes reads input shapes as perf_analyzer's --shape writes one,
// NAME:D1,D2,… (the dims of one request, without the batch dimension),
// several separated by spaces: "input_ids:128 attention_mask:128". A name
// may be given once; every dim must be a positive size.
func ParseShapes(s string) (map[string][]int64, error) {
	out := map[string][]int64{}
	for _, field := range strings.Fields(s) {
		name, dims, err := ParseShape(field)
		if err != nil {
			return nil, err
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("%q: input %q given twice", field, name)
		}
		out[name] = dims
	}
	return out, nil
}

// ParseShape reads one NAME:D1,D2,… (perf_analyzer's --shape).
func ParseShape(s string) (string, []int64, error) {
	i := strings.LastIndexByte(s, ':')
	if i <= 0 || i == len(s)-1 {
		return "", nil, fmt.Errorf("%q is not NAME:DIMS, such as input_ids:128 or image:3,512,512", s)
	}
	name, list := s[:i], s[i+1:]
	var dims []int64
	for _, part := range strings.Split(list, ",") {
		d, err := strconv.ParseInt(strings.TrimSpace(part), 10, 64)
		if err != nil || d < 1 || d > 1<<31-1 {
			return "", nil, fmt.Errorf("%q: %q is not a size; every dim must be a positive whole number", s, part)
		}
		dims = append(dims, d)
	}
	return name, dims, nil
}

// FormatShapes writes shapes as ParseShapes reads them, by input name.
func FormatShapes(shapes map[string][]int64) string {
	parts := make([]string, 0, len(shapes))
	for _, name := range slices.Sorted(maps.Keys(shapes)) {
		dims := make([]string, len(shapes[name]))
		for i, d := range shapes[name] {
			dims[i] = strconv.FormatInt(d, 10)
		}
		parts = append(parts, name+":"+strings.Join(dims, ","))
	}
	return strings.Join(parts, " ")
}
