package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"

	"github.com/steadyhttp/steady/testserver"
)

// loadConfig reads and validates the -config file. Errors are *usageError naming the file and,
// for a bad rule, the rule, field and value.
func loadConfig(path string) (*testserver.Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usage(fmt.Errorf("-config: %w", err))
	}
	cfg, err := testserver.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, usage(fmt.Errorf("-config %s: %s", path, describeConfigError(err)))
	}
	return cfg, nil
}

// describeConfigError phrases a DecodeConfig error; a *RuleError becomes
// `rule 0 ("name"): invalid value "-5" for limit: cause`.
func describeConfigError(err error) string {
	var re *testserver.RuleError
	if errors.As(err, &re) {
		where := fmt.Sprintf("rule %d", re.Index)
		if re.Rule != "" {
			where += fmt.Sprintf(" (%q)", re.Rule)
		}
		if errors.Is(re.Err, testserver.ErrUnknownField) {
			return fmt.Sprintf("%s: unknown field %q", where, re.Field)
		}
		return fmt.Sprintf("%s: invalid value %q for %s: %v", where, re.Value, re.Field, re.Err)
	}
	return err.Error()
}

// settings returns cfg without its rules: the part of a config file that only a restart applies.
func settings(cfg *testserver.Config) testserver.Config {
	if cfg == nil {
		return testserver.Config{}
	}
	s := *cfg
	s.Rules = nil
	return s
}

// sameSettings reports whether two config files carry the same settings (ignoring rules).
func sameSettings(a, b *testserver.Config) bool {
	return reflect.DeepEqual(settings(a), settings(b))
}

// limiterOptions returns the limiter's options: the config file's settings (cfg may be nil), then
// the server settings given on the command line, which override them.
func (o *options) limiterOptions(cfg *testserver.Config) []testserver.Option {
	var opts []testserver.Option
	if cfg != nil {
		opts = append(opts, cfg.Options()...)
	}
	if o.status != nil {
		opts = append(opts, testserver.WithStatus(*o.status))
	}
	if o.headers != nil {
		opts = append(opts, testserver.WithHeaders(*o.headers))
	}
	if o.maxKeys != nil {
		opts = append(opts, testserver.WithMaxKeys(*o.maxKeys))
	}
	if o.dialect != "" {
		opts = append(opts, testserver.WithDialect(o.dialect))
	}
	if o.redis != nil {
		opts = append(opts, testserver.WithStore(o.redis))
	}
	if o.metrics != nil {
		opts = append(opts, testserver.WithRequestHook(o.metrics.Observe))
	}
	return opts
}

// optionFlags maps the testserver option constructors the command line sets to their flags.
var optionFlags = map[string]string{
	"WithStatus":  "status",
	"WithMaxKeys": "max-keys",
	"WithHeaders": "headers",
}

// newLimiter builds the limiter for o (and the config file cfg, when o has -config). Invalid
// settings give a *usageError naming the flag or the file.
func (o *options) newLimiter(cfg *testserver.Config) (*testserver.Limiter, error) {
	rules := []testserver.Rule{o.rule}
	if cfg != nil {
		rules = cfg.Rules
	}
	l, err := testserver.NewLimiter(rules, o.limiterOptions(cfg)...)
	if err == nil {
		return l, nil
	}
	var oe *testserver.OptionError
	if errors.As(err, &oe) {
		if name, ok := optionFlags[oe.Option]; ok && o.flagSets(name) {
			return nil, &usageError{Flag: name, Value: oe.Value, Err: oe.Err}
		}
	}
	if cfg != nil {
		return nil, usage(fmt.Errorf("-config %s: %s", o.configPath, describeConfigError(err)))
	}
	return nil, usage(err)
}

// flagSets reports whether the command line set the server setting of the named flag.
func (o *options) flagSets(name string) bool {
	switch name {
	case "status":
		return o.status != nil
	case "max-keys":
		return o.maxKeys != nil
	case "headers":
		return o.headers != nil
	}
	return false
}
