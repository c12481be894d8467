package sched

import "time"

// mheap is a binary min-heap of model ids keyed by a time, with the position
// of every id kept so that a key can change in O(log M). A model is in the
// heap exactly when its key is not never.
type mheap struct {
	ids []ModelID
	pos []int32         // by model id: index in ids, or -1
	key []time.Duration // by model id
}

// ensure makes room for model ids below n.
func (h *mheap) ensure(n int) {
	for len(h.pos) < n {
		h.pos = append(h.pos, -1)
		h.key = append(h.key, never)
	}
}

// min returns the smallest key, or never when the heap is empty.
func (h *mheap) min() time.Duration {
	if len(h.ids) == 0 {
		return never
	}
	return h.key[h.ids[0]]
}

// top returns the id with the smallest key (len > 0).
func (h *mheap) top() ModelID { return h.ids[0] }

// set gives id the key k; never removes it.
func (h *mheap) set(id ModelID, k time.Duration) {
	old := h.key[id]
	if old == k {
		return
	}
	h.key[id] = k
	i := int(h.pos[id])
	switch {
	case k == never:
		h.remove(i)
	case i < 0:
		h.ids = append(h.ids, id)
		h.pos[id] = int32(len(h.ids) - 1)
		h.up(len(h.ids) - 1)
	case k < old:
		h.up(i)
	default:
		h.down(i)
	}
}

func (h *mheap) remove(i int) {
	id := h.ids[i]
	last := len(h.ids) - 1
	if i != last {
		h.swap(i, last)
	}
	h.ids = h.ids[:last]
	h.pos[id] = -1
	if i != last {
		h.down(i)
		h.up(i)
	}
}

func (h *mheap) swap(i, j int) {
	h.ids[i], h.ids[j] = h.ids[j], h.ids[i]
	h.pos[h.ids[i]] = int32(i)
	h.pos[h.ids[j]] = int32(j)
}

func (h *mheap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if h.key[h.ids[p]] <= h.key[h.ids[i]] {
			return
		}
		h.swap(i, p)
		i = p
	}
}

func (h *mheap) down(i int) {
	n := len(h.ids)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		c := l
		if r := l + 1; r < n && h.key[h.ids[r]] < h.key[h.ids[l]] {
			c = r
		}
		if h.key[h.ids[i]] <= h.key[h.ids[c]] {
			return
		}
		h.swap(i, c)
		i = c
	}
}

// due appends to dst every id whose key is at most t, using stack as scratch;
// it visits only those ids and their children.
func (h *mheap) due(t time.Duration, dst, stack []int32) ([]int32, []int32) {
	if len(h.ids) == 0 || h.key[h.ids[0]] > t {
		return dst, stack
	}
	stack = append(stack[:0], 0)
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		dst = append(dst, int32(h.ids[i]))
		for _, c := range [2]int32{2*i + 1, 2*i + 2} {
			if int(c) < len(h.ids) && h.key[h.ids[c]] <= t {
				stack = append(stack, c)
			}
		}
	}
	return dst, stack
}
