// Package lro waits for long-running operations: an API that answers a request with 202 Accepted
// and the URL of a status resource (in Operation-Location, Azure-AsyncOperation or Location,
// often with Retry-After) is polled, through the caller's *http.Client, until a function of the
// caller's says the operation is done, or the context ends:
//
//	resp, err := c.Do(createReq) // 202 Accepted, Operation-Location: https://api.example/ops/42
//	...
//	result, err := lro.Wait(ctx, c, resp, func(r *http.Response) (string, bool, error) {
//		var st struct{ Status, Result string }
//		if err := json.NewDecoder(r.Body).Decode(&st); err != nil {
//			return "", false, err
//		}
//		switch st.Status {
//		case "Succeeded":
//			return st.Result, true, nil
//		case "Failed":
//			return "", true, errOperationFailed
//		}
//		return "", false, nil // still running: poll again
//	})
//
// With steady's client (package client) the polls go through the same stack as every other request:
// paced per key, queued, retried on 429 and 5xx, paused on Retry-After. Between polls, Wait waits
// what the last response's Retry-After (or retry-after-ms) asks, and otherwise an interval that
// doubles from WithInterval up to WithMaxInterval. It never waits past the context's deadline: it
// fails at once when the next wait would pass it.
//
// Every failure is an *Error (the status URL, the polls sent, the last status) wrapping its cause:
// ErrNoStatusURL, ErrStatus, the Done function's own error, a transport error, or the context's
// error; match them with errors.Is and errors.As.
package lro
