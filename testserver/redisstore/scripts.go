package redisstore

import (
	"crypto/sha1"
	"embed"
	"encoding/hex"
	"strings"

	"github.com/redis/go-redis/v9"
)

// scriptFiles are the decision scripts' Lua pieces: script_shared.lua and script_algorithms.lua
// (the definitions: constants, arithmetic, the five algorithms), script_call.lua,
// script_kinds.lua and script_locals.lua (the start of a run), the blocks the drivers include
// (script_args.lua, script_read.lua, script_decide.lua, script_commit.lua, script_write.lua), and
// the two drivers.
//
//go:embed script_*.lua
var scriptFiles embed.FS

// The decision scripts, run by FCALL of the functions of the library when Redis has it (Redis 7
// and later; see library), else by EVALSHA with a fallback to EVAL when Redis does not know one
// (after a restart or SCRIPT FLUSH). All take the same arguments and give the same reply (see
// script_shared.lua); scriptOne decides a request of one check, the usual one, and scriptMany any
// number. They are one algorithm: each is the definitions, the start of a run and its driver,
// whose "--#include" lines are replaced by the blocks they name, so a check is read, decided,
// committed and written by the same Lua text in all of them. Two drivers, because Redis runs the
// script on every decision in its single thread: the lists scriptMany keeps to decide several
// checks all-or-nothing (the states by key, the commits) cost a lone check about 8% of its time
// inside Redis (one token-bucket check, pipelined EVALSHAs on the development machine,
// usec_per_call in INFO commandstats: 9.0 µs for scriptMany, 8.3 µs for scriptOne; 9.3 µs for the
// one script there was before; see docs/redis-store.md).
var (
	scriptMany = newLuaScript(composeScript("script_many.lua"))
	scriptOne  = newLuaScript(composeScript("script_one.lua"))
	library    = newLuaLibrary(map[*luaScript]string{scriptOne: "script_one.lua", scriptMany: "script_many.lua"})
)

// luaScript is a decision script with its hash ready to be EVALSHA's argument, and the name of the
// library's function that runs it.
type luaScript struct {
	*redis.Script
	src string
	sha any // Hash(), converted once rather than on every call
	fn  any // the function's name, FCALL's argument
}

func newLuaScript(src string) *luaScript {
	sc := redis.NewScript(src)
	return &luaScript{Script: sc, src: src, sha: sc.Hash()}
}

// The pieces of a run, in order: a script's and a function's (which has no kinds block).
var (
	scriptPieces   = []string{"script_shared.lua", "script_call.lua", "script_kinds.lua", "script_algorithms.lua", "script_locals.lua"}
	functionPieces = []string{"script_call.lua", "script_locals.lua"}
)

// composeScript returns the script of driver: the definitions, the start of a run, and driver with
// its blocks included.
func composeScript(driver string) string {
	var b strings.Builder
	for _, name := range scriptPieces {
		b.WriteString(readScriptFile(name))
	}
	writeDriver(&b, driver)
	return b.String()
}

// The library of the decision functions, loaded by FUNCTION LOAD and called by FCALL. A function
// runs the same Lua as its script, but its definitions (constants, arithmetic, the closures of the
// five algorithms) are made once, when the library is loaded, rather than on every run; and Redis
// calls a function for less than it runs a script: one token-bucket check costs 6.7 µs inside
// Redis by FCALL against 7.7 µs by EVALSHA (usec_per_call in INFO commandstats, redis-benchmark
// as in docs/redis-store.md, least of six runs alternating). The names carry a hash of the scripts,
// so that stores of releases whose scripts differ, sharing one Redis, each load and call their own
// (a function's name is global in Redis, and FUNCTION LOAD REPLACE of one name by another release
// would change the others' decisions under them); a release leaves its library behind in Redis
// (a few kB), as a script stays in Redis's script cache.
type luaLibrary struct {
	name string
	src  string
}

// libraryPrefix starts the library's name and its functions'.
const libraryPrefix = "steady_"

// newLuaLibrary returns the library of the scripts, one function per script (its driver named),
// and sets each script's function name.
func newLuaLibrary(drivers map[*luaScript]string) *luaLibrary {
	// The name's hash is the whole library's, written with a placeholder for it: a release that
	// changes only the library's own lines (its wrapper, its state) gets a name of its own too.
	const idMark = "@ID@"
	var b strings.Builder
	b.WriteString("#!lua name=" + libraryPrefix + idMark + "\n")
	b.WriteString(readScriptFile("script_shared.lua"))
	b.WriteString("buckets, fixed, sliding, logs = true, true, true, true\n")
	b.WriteString("nums, nnums, one_st, one_out = {}, 0, {}, {}\n")
	b.WriteString(readScriptFile("script_algorithms.lua"))
	fns := make(map[*luaScript]string, len(drivers))
	for _, sc := range []*luaScript{scriptOne, scriptMany} {
		driver := drivers[sc]
		fn := libraryPrefix + strings.TrimSuffix(strings.TrimPrefix(driver, "script_"), ".lua") + "_" + idMark
		fns[sc] = fn
		b.WriteString("redis.register_function('" + fn + "', function(KEYS, ARGV)\n")
		for _, name := range functionPieces {
			b.WriteString(readScriptFile(name))
		}
		writeDriver(&b, driver)
		b.WriteString("end)\n")
	}
	sum := sha1.Sum([]byte(b.String()))
	id := hex.EncodeToString(sum[:])[:16]
	for sc, fn := range fns {
		sc.fn = strings.ReplaceAll(fn, idMark, id)
	}
	return &luaLibrary{name: libraryPrefix + id, src: strings.ReplaceAll(b.String(), idMark, id)}
}

// includePrefix starts a driver's line that is replaced by the block it names.
const includePrefix = "--#include "

// writeDriver writes driver with its blocks included.
func writeDriver(b *strings.Builder, driver string) {
	for line := range strings.Lines(readScriptFile(driver)) {
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), includePrefix); ok {
			b.WriteString(readScriptFile(name))
			continue
		}
		b.WriteString(line)
	}
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
