package learn

// SetDebug routes the declared strategy's per-answer trace to f (nil: off). Tests only.
func SetDebug(f func(string)) { debugDeclared = f }

// strategyOf returns l's strategy of type *T (nil when it has none).
func strategyOf[T any](l *Learner) *T {
	for _, s := range l.strats {
		if x, ok := any(s).(*T); ok {
			return x
		}
	}
	return nil
}
