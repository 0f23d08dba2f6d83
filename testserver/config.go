package testserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"
)

// ErrInvalidConfig is matched by errors about a configuration document that is not valid JSON of
// the expected shape (bad rule values match [ErrInvalidRule] instead).
var ErrInvalidConfig = errors.New("testserver: invalid config")

// Config is the JSON configuration document of a limiter: its rules and the settings a config
// file can carry. [DecodeConfig] reads it; [Config.Options] turns its settings into options.
//
//	{
//	  "trusted_proxies": ["10.0.0.0/8"],
//	  "rules": [
//	    {"name": "per-ip", "key": "ip", "algorithm": "sliding-window", "limit": 100, "window": "1m"},
//	    {"name": "per-user", "key": "user+route", "algorithm": "token-bucket", "limit": 10,
//	     "window": "1s", "burst": 20, "tiers": {"user:241531": {"limit": 50}}}
//	  ]
//	}
type Config struct {
	// Rules are the rate limits.
	Rules []Rule `json:"rules"`
	// TrustedProxies are CIDR prefixes or addresses; see [WithTrustedProxies].
	TrustedProxies []string `json:"trusted_proxies,omitempty"`
	// IPv4Prefix and IPv6Prefix group client addresses; see [WithIPv4Prefix] and
	// [WithIPv6Prefix]. 0 keeps the defaults (32 and 64).
	IPv4Prefix int `json:"ipv4_prefix,omitempty"`
	IPv6Prefix int `json:"ipv6_prefix,omitempty"`
	// Status is the throttled status; 0 keeps 429. See [WithStatus].
	Status int `json:"status,omitempty"`
	// Headers switches the rate-limit headers; nil keeps them on. See [WithHeaders].
	Headers *bool `json:"headers,omitempty"`
	// MaxKeys caps the memory store; 0 keeps [DefaultMaxKeys]. See [WithMaxKeys].
	MaxKeys int `json:"max_keys,omitempty"`
}

// Options returns the options for c's settings (not its rules: pass those to [NewLimiter],
// [WithRules] or [Limiter.SetRules]). Invalid values surface as errors of the constructor the
// options are given to.
func (c *Config) Options() []Option {
	var opts []Option
	if len(c.TrustedProxies) > 0 {
		opts = append(opts, WithTrustedProxies(c.TrustedProxies...))
	}
	if c.IPv4Prefix != 0 {
		opts = append(opts, WithIPv4Prefix(c.IPv4Prefix))
	}
	if c.IPv6Prefix != 0 {
		opts = append(opts, WithIPv6Prefix(c.IPv6Prefix))
	}
	if c.Status != 0 {
		opts = append(opts, WithStatus(c.Status))
	}
	if c.Headers != nil {
		opts = append(opts, WithHeaders(*c.Headers))
	}
	if c.MaxKeys != 0 {
		opts = append(opts, WithMaxKeys(c.MaxKeys))
	}
	return opts
}

// DecodeConfig reads a JSON [Config] from r (or a bare JSON array of rules), strictly: unknown
// fields are errors. It validates the rules (a *[RuleError] names the rule and field) and the
// settings (an *[OptionError]); malformed JSON gives an error matching [ErrInvalidConfig] with the
// byte offset.
func DecodeConfig(r io.Reader) (*Config, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%w: reading: %w", ErrInvalidConfig, err)
	}
	data = bytes.TrimSpace(data)
	var cfg Config
	if len(data) > 0 && data[0] == '[' {
		cfg.Rules, err = decodeRuleList(data)
	} else {
		var aux struct {
			Config
			Rules json.RawMessage `json:"rules"`
		}
		if err = strictUnmarshal(data, &aux); err != nil {
			return nil, configErr(data, err)
		}
		cfg = aux.Config
		if len(aux.Rules) == 0 || string(aux.Rules) == "null" {
			return nil, fmt.Errorf("%w: no \"rules\" array", ErrInvalidConfig)
		}
		cfg.Rules, err = decodeRuleList(aux.Rules)
	}
	if err != nil {
		return nil, err
	}
	if err := ValidateRules(cfg.Rules); err != nil {
		return nil, err
	}
	if err := newConfig(cfg.Options()).serverErr(); err != nil {
		return nil, err
	}
	return &cfg, nil
}

// DecodeRules reads a JSON array of rules, or a config document's rules (see [DecodeConfig]).
func DecodeRules(r io.Reader) ([]Rule, error) {
	cfg, err := DecodeConfig(r)
	if err != nil {
		return nil, err
	}
	return cfg.Rules, nil
}

func decodeRuleList(data []byte) ([]Rule, error) {
	var raws []json.RawMessage
	if err := strictUnmarshal(data, &raws); err != nil {
		return nil, configErr(data, err)
	}
	rules := make([]Rule, len(raws))
	for i, raw := range raws {
		if err := json.Unmarshal(raw, &rules[i]); err != nil {
			var re *RuleError
			if errors.As(err, &re) {
				re.Index = i
				return nil, re
			}
			return nil, &RuleError{Index: i, Field: "(rule)", Value: abbreviate(raw), Err: err}
		}
	}
	return rules, nil
}

// strictUnmarshal decodes one JSON value into v, rejecting object members that are not among
// v's JSON field names (matched case-insensitively, as encoding/json does).
func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("unexpected data after the JSON value")
	}
	if t := reflect.TypeOf(v).Elem(); t.Kind() == reflect.Struct {
		var members map[string]json.RawMessage
		if err := json.Unmarshal(data, &members); err != nil {
			return err
		}
		known := jsonNames(t)
		names := slices.Sorted(maps.Keys(members))
		for _, name := range names {
			if !known[strings.ToLower(name)] {
				return &unknownFieldError{name: name}
			}
		}
	}
	return nil
}

// unknownFieldError reports an object member no field takes.
type unknownFieldError struct{ name string }

func (e *unknownFieldError) Error() string { return fmt.Sprintf("unknown field %q", e.name) }
func (e *unknownFieldError) Unwrap() error { return ErrUnknownField }

// ErrUnknownField is matched by errors about a JSON member that no field takes (a typo such as
// "limt").
var ErrUnknownField = errors.New("testserver: unknown field")

// jsonNames returns the lower-cased JSON names of t's fields, including promoted ones.
func jsonNames(t reflect.Type) map[string]bool {
	names := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			maps.Copy(names, jsonNames(f.Type))
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		names[strings.ToLower(name)] = true
	}
	return names
}

func configErr(data []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line := 1 + bytes.Count(data[:min(int(se.Offset), len(data))], []byte("\n"))
		return fmt.Errorf("%w: line %d (byte %d): %w", ErrInvalidConfig, line, se.Offset, err)
	}
	return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
}

func abbreviate(b []byte) string {
	s := string(b)
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

// ruleAlias has Rule's fields without its methods.
type ruleAlias Rule

// ruleJSON is Rule's JSON form: durations as strings, tiers decoded one by one.
type ruleJSON struct {
	ruleAlias
	Window string                     `json:"window,omitempty"`
	Tiers  map[string]json.RawMessage `json:"tiers,omitempty"`
}

// MarshalJSON writes the rule with its Window as a Go duration string ("1h0m0s"). KeyFunc is not
// written.
func (r Rule) MarshalJSON() ([]byte, error) {
	aux := struct {
		ruleAlias
		Window string `json:"window,omitempty"`
	}{ruleAlias: ruleAlias(r)}
	if r.Window != 0 {
		aux.Window = r.Window.String()
	}
	return json.Marshal(aux)
}

// UnmarshalJSON reads a rule strictly (unknown fields are errors) with Window as a Go duration
// string ("1m", "500ms"). It does not validate values beyond their types; [ValidateRules],
// [NewLimiter] and [DecodeConfig] do. Errors are *[RuleError]s naming the field.
func (r *Rule) UnmarshalJSON(data []byte) error {
	var aux ruleJSON
	if err := strictUnmarshal(data, &aux); err != nil {
		return jsonFieldErr(aux.Name, "", err)
	}
	out := Rule(aux.ruleAlias)
	w, err := parseWindow(aux.Window)
	if err != nil {
		return &RuleError{Rule: out.Name, Field: "window", Value: aux.Window, Err: err}
	}
	out.Window = w
	out.Tiers = nil
	if aux.Tiers != nil {
		out.Tiers = make(map[string]Tier, len(aux.Tiers))
		for k, raw := range aux.Tiers {
			var t Tier
			if err := t.UnmarshalJSON(raw); err != nil {
				var re *RuleError
				if errors.As(err, &re) {
					re.Rule, re.Field = out.Name, "tiers["+k+"]."+re.Field
					return re
				}
				return jsonFieldErr(out.Name, "tiers["+k+"].", err)
			}
			out.Tiers[k] = t
		}
	}
	*r = out
	return nil
}

type tierAlias Tier

// MarshalJSON writes the tier with its Window as a Go duration string.
func (t Tier) MarshalJSON() ([]byte, error) {
	aux := struct {
		tierAlias
		Window string `json:"window,omitempty"`
	}{tierAlias: tierAlias(t)}
	if t.Window != 0 {
		aux.Window = t.Window.String()
	}
	return json.Marshal(aux)
}

// UnmarshalJSON reads a tier strictly, with Window as a Go duration string.
func (t *Tier) UnmarshalJSON(data []byte) error {
	var aux struct {
		tierAlias
		Window string `json:"window,omitempty"`
	}
	if err := strictUnmarshal(data, &aux); err != nil {
		return jsonFieldErr("", "", err)
	}
	w, err := parseWindow(aux.Window)
	if err != nil {
		return &RuleError{Field: "window", Value: aux.Window, Err: err}
	}
	*t = Tier(aux.tierAlias)
	t.Window = w
	return nil
}

func parseWindow(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("not a Go duration such as \"1m\" or \"500ms\": %w", err)
	}
	return d, nil
}

// jsonFieldErr turns an encoding/json error into a *RuleError naming the field where it can.
func jsonFieldErr(rule, prefix string, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		// Fields of embedded aliases come prefixed with the alias type's name.
		field := te.Field
		for _, embedded := range []string{"ruleAlias.", "tierAlias."} {
			field = strings.TrimPrefix(field, embedded)
		}
		if field == "window" {
			return &RuleError{Rule: rule, Field: prefix + field, Value: te.Value,
				Err: errors.New("must be a Go duration string such as \"1m\", not a " + te.Value)}
		}
		return &RuleError{Rule: rule, Field: prefix + field, Value: te.Value,
			Err: fmt.Errorf("wrong JSON type: want %v", te.Type)}
	}
	var ue *unknownFieldError
	if errors.As(err, &ue) {
		return &RuleError{Rule: rule, Field: prefix + ue.name, Err: ErrUnknownField}
	}
	field, value := "(json)", ""
	return &RuleError{Rule: rule, Field: prefix + field, Value: value, Err: err}
}
