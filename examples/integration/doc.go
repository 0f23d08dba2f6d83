// Package integration shows how to test code that calls a rate-limited API, with testserver as
// the API: a real rate limiter in the test's process, on a loopback port, that answers 429 the way
// production APIs do and records every request it decided.
//
// The code under test is Notifier, which posts messages to a webhook one at a time, in order,
// through whatever *http.Client it is given. The tests (notifier_test.go; read them as the
// documentation) give it a steady client and assert what matters when the API throttles:
//
//   - every message is delivered exactly once, and in order;
//   - no request arrives before the Retry-After the server asked for (Server.Arrivals has the
//     server's timestamps, so the test needs no clock of its own and no sleeps);
//   - against a server that sends a bare 429 with no headers at all (WithHeaders(false)), the
//     messages still get through, on the client's exponential backoff;
//   - when the server asks for a wait longer than the client accepts, the Notifier stops and says
//     which message it could not deliver.
package integration
