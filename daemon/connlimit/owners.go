package connlimit

// What each owner of holdings (the model a request is for) holds of a
// Budget, and how its holdings count.

// allowance is how many bytes of holdings that are not large an owner may
// hold before its further ones are bulk.
func (b *Budget) allowance() int64 { return b.max / 64 }

// owned is what one owner's holdings hold or wait for; an owner whose
// counts are both 0 has no entry.
type owned struct {
	small int64 // bytes of its holdings that are not large, held or waited for
	held  int64 // bytes held
}

// claim books n more bytes of a holding of owner's that is large or not and
// holds mine bytes that are not large already, and says how they count: the
// holding's own bytes do not make it heavy.
func (b *Budget) claim(owner string, n, mine int64, isLarge bool) kind {
	if isLarge {
		return large // it counts in bulk whatever its owner holds
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	o := b.owners[owner]
	k := light
	if o.small-mine >= b.allowance() {
		k = heavy
	}
	o.small += n
	b.owners[owner] = o
	return k
}

// took books n bytes claimed for owner as held.
func (b *Budget) took(owner string, n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	o := b.owners[owner]
	o.held += n
	b.owners[owner] = o
}

// unclaim takes back what claim booked, and n bytes held when held.
func (b *Budget) unclaim(owner string, n int64, k kind, held bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	o := b.owners[owner]
	if held {
		o.held -= n
	}
	if k != large {
		o.small -= n
	}
	if o == (owned{}) {
		delete(b.owners, owner)
		return
	}
	b.owners[owner] = o
}

// Holds is how many bytes owner's holdings hold now.
func (b *Budget) Holds(owner string) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.owners[owner].held
}

// Owners is how many bytes each owner's holdings hold now (owners that
// hold nothing are left out).
func (b *Budget) Owners() map[string]int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[string]int64, len(b.owners))
	for owner, o := range b.owners {
		if o.held > 0 {
			out[owner] = o.held
		}
	}
	return out
}
