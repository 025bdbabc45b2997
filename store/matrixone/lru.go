package matrixone

// tableLRU keeps a value per table for the most recently used tables. It is not safe
// for concurrent use: its owner locks around it.
type tableLRU[T any] struct {
	tabs map[string]T
	used []string // least recently used first
}

// use returns the value kept for name, or a new one from fresh when there is none or
// keep rejects it, and marks name the most recently used, forgetting the least
// recently used tables beyond max.
func (l *tableLRU[T]) use(name string, max int, keep func(T) bool, fresh func() T) T {
	if l.tabs == nil {
		l.tabs = map[string]T{}
	}
	v, ok := l.tabs[name]
	if !ok || keep != nil && !keep(v) {
		v = fresh()
		l.tabs[name] = v
	}
	used := l.used[:0]
	for _, n := range l.used {
		if n != name {
			used = append(used, n)
		}
	}
	used = append(used, name)
	for len(used) > max {
		delete(l.tabs, used[0])
		used = used[1:]
	}
	l.used = used
	return v
}
