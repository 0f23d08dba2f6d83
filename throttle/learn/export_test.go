package learn

// SetDebug routes the declared strategy's per-answer trace to f (nil: off). Tests only.
func SetDebug(f func(string)) { debugDeclared = f }
