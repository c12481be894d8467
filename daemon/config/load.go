package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"sync"

	"github.com/gpulet/gpuletd/internal/configerr"
	"github.com/gpulet/gpuletd/internal/fsperm"
	"gopkg.in/yaml.v3"
)

// EnvConfigFile names the configuration file when --config is not given.
const EnvConfigFile = "GPULETD_CONFIG"

// EnvPrefix starts every environment override: GPULETD_<SECTION>_<FIELD>.
const EnvPrefix = "GPULETD_"

// ErrInvalid is wrapped by every configuration error: a file that does not
// parse, an unknown field, a bad override or a value that fails validation.
var ErrInvalid = errors.New("invalid configuration")

// SourceKind says where a value came from.
type SourceKind string

// Where values come from, in increasing precedence.
const (
	FromDefault SourceKind = "default"
	FromFile    SourceKind = "file"
	FromEnv     SourceKind = "env"
)

// Source is where one field's value came from: the defaults, a file (Detail
// is its path) or the environment (Detail is the variable).
type Source struct {
	Kind   SourceKind
	Detail string
}

func (s Source) String() string {
	if s.Detail == "" {
		return string(s.Kind)
	}
	return string(s.Kind) + " " + s.Detail
}

// Loaded is an effective configuration with the source of every field
// (keyed by its dotted YAML path, e.g. "scheduler.policy") and warnings that
// do not stop the daemon (such as GPULETD_ variables that name no field).
type Loaded struct {
	Config   Config
	File     string
	Sources  map[string]Source
	Warnings []string
}

// Load builds the effective configuration: defaults, then the file (when
// path is not empty), then GPULETD_* variables from environ (os.Environ
// form), then validation. Every error wraps ErrInvalid and names the file,
// the field and what is allowed.
func Load(path string, environ []string) (*Loaded, error) {
	l := &Loaded{Config: Default(), File: path, Sources: map[string]Source{}}
	for _, f := range fieldPaths() {
		l.Sources[f.path] = Source{Kind: FromDefault}
	}
	l.applyOTelEnv(environ)
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("%w: read config file: %w", ErrInvalid, fsperm.ExplainRead(err, path))
		}
		if err := l.applyFile(path, data); err != nil {
			return nil, err
		}
	}
	if err := l.applyEnv(environ); err != nil {
		return nil, err
	}
	l.fitExportBatch()
	if err := l.Config.Validate(); err != nil {
		if path == "" {
			return nil, err
		}
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	l.Warnings = append(l.Warnings, l.folderWarnings()...)
	return l, nil
}

// Set sets the field at the dotted path to value, read as its environment
// variable's would be (a list as YAML flow), and records where it came
// from; the caller validates once every value is set.
func (l *Loaded) Set(path, value string, from Source) error {
	for _, f := range fieldPaths() {
		if f.path != path {
			continue
		}
		if err := f.set(&l.Config, value); err != nil {
			return fmt.Errorf("%w: %s", ErrInvalid, err)
		}
		l.Sources[path] = from
		return nil
	}
	return fmt.Errorf("set %s: the configuration has no such field", path)
}

func (l *Loaded) applyFile(path string, data []byte) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("%w: config %s: %s", ErrInvalid, path, cleanYAMLError(err))
	}
	if len(doc.Content) == 0 {
		return nil // an empty file keeps the defaults
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&l.Config); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: config %s: %s", ErrInvalid, path, configerr.CleanIn(err, sections(), &doc))
	}
	markPresentNodes(doc.Content[0], "", func(p string, _, _ *yaml.Node) {
		if _, ok := l.Sources[p]; ok {
			l.Sources[p] = Source{Kind: FromFile, Detail: path}
		}
	})
	return nil
}

// cleanYAMLError turns yaml.v3's messages into one line that names the line
// and the problem ("line 4: unknown field "polcy" in scheduler (did you
// mean scheduler.policy?)").
func cleanYAMLError(err error) string {
	return configerr.Clean(err, sections())
}

// sections are the configuration's sections for configerr; a devices list's
// entries are DeviceEntry values (Devices decodes them itself).
var sections = sync.OnceValue(func() map[string]configerr.Section {
	return configerr.Sections(reflect.TypeFor[Config](), map[reflect.Type]reflect.Type{reflect.TypeFor[Devices](): reflect.TypeFor[DeviceEntry]()})
})

func (l *Loaded) applyEnv(environ []string) error {
	fields := map[string]field{}
	for _, f := range fieldPaths() {
		fields[f.env] = f
	}
	var errs []error
	var envs map[string]string // the variables, for a guess at a misspelt one
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, EnvPrefix) || name == EnvConfigFile {
			continue
		}
		f, known := fields[name]
		if !known {
			if !strings.HasPrefix(name, internalEnvPrefix) {
				if envs == nil {
					envs = make(map[string]string, len(fields))
					for env := range fields {
						envs[env] = env
					}
				}
				l.Warnings = append(l.Warnings, fmt.Sprintf("environment variable %s names no configuration field; ignored%s", name, configerr.DidYouMean(name, envs)))
			}
			continue
		}
		if err := f.set(&l.Config, value); err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: %w", name, value, err))
			continue
		}
		l.Sources[f.path] = Source{Kind: FromEnv, Detail: name}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrInvalid, errors.Join(errs...))
	}
	return nil
}

// internalEnvPrefix starts the GPULETD_ variables gpuletd sets for its own
// child processes (executors); they are not configuration and draw no warning.
const internalEnvPrefix = "GPULETD_EXEC_"
