package redisstore

import (
	"embed"
	"strings"

	"github.com/redis/go-redis/v9"
)

// scriptFiles are the decision scripts' Lua pieces: script_shared.lua (arguments, arithmetic, the
// five algorithms), the blocks the drivers include (script_args.lua, script_read.lua,
// script_decide.lua, script_commit.lua, script_write.lua), and the two drivers.
//
//go:embed script_*.lua
var scriptFiles embed.FS

// The decision scripts, run by EVALSHA with a fallback to EVAL when Redis does not know one (after
// a restart or SCRIPT FLUSH). Both take the same arguments and give the same reply (see
// script_shared.lua); scriptOne decides a request of one check, the usual one, and scriptMany any
// number. They are one algorithm: each is script_shared.lua followed by its driver, whose
// "--#include" lines are replaced by the blocks they name, so a check is read, decided, committed
// and written by the same Lua text in both. Two drivers, because Redis runs the script on every
// decision in its single thread: the lists scriptMany keeps to decide several checks
// all-or-nothing (the states by key, the commits) cost a lone check about 8% of its time
// inside Redis (one token-bucket check, pipelined EVALSHAs on the development machine,
// usec_per_call in INFO commandstats: 9.0 µs for scriptMany, 8.3 µs for scriptOne; 9.3 µs for the
// one script there was before; see docs/redis-store.md).
var (
	scriptMany = newLuaScript(composeScript("script_many.lua"))
	scriptOne  = newLuaScript(composeScript("script_one.lua"))
)

// luaScript is a decision script with its hash ready to be EVALSHA's argument.
type luaScript struct {
	*redis.Script
	src string
	sha any // Hash(), converted once rather than on every call
}

func newLuaScript(src string) *luaScript {
	sc := redis.NewScript(src)
	return &luaScript{Script: sc, src: src, sha: sc.Hash()}
}

// includePrefix starts a driver's line that is replaced by the block it names.
const includePrefix = "--#include "

// composeScript returns script_shared.lua followed by driver with its blocks included.
func composeScript(driver string) string {
	var b strings.Builder
	b.WriteString(readScriptFile("script_shared.lua"))
	for line := range strings.Lines(readScriptFile(driver)) {
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), includePrefix); ok {
			b.WriteString(readScriptFile(name))
			continue
		}
		b.WriteString(line)
	}
	return b.String()
}

func readScriptFile(name string) string {
	b, err := scriptFiles.ReadFile(name)
	if err != nil {
		panic("redisstore: " + err.Error()) // embedded: cannot fail for the names above
	}
	return string(b)
}

// scriptFor returns the script that decides n checks.
func scriptFor(n int) *luaScript {
	if n == 1 {
		return scriptOne
	}
	return scriptMany
}
