package repository

import (
	"crypto/md5" // the checksum agent's algorithm: a guard against the wrong file, not against an attacker
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/gpulet/gpuletd/kserve/tritonpb"
)

// ChecksumAgent is the repository agent gpuletd runs: Triton's checksum
// agent, which refuses to load a model whose files' MD5 digests differ from
// those its parameters give.
const ChecksumAgent = "checksum"

// tritonChecksums reads a config.pbtxt's model_repository_agents: the
// checksum agent's parameters, "MD5:<path in the model folder>" to the
// file's digest in hex. Other agents are refused, naming them.
func tritonChecksums(ra *tritonpb.ModelRepositoryAgents, bad func(string, ...any)) map[string]string {
	var out map[string]string
	for i, a := range ra.GetAgents() {
		f := fmt.Sprintf("model_repository_agents.agents[%d]", i)
		if a.Name != ChecksumAgent {
			bad("%s.name: %q is not run; gpuletd runs Triton's %q agent alone (its repository agents are libraries of Triton's)", f, a.Name, ChecksumAgent)
			continue
		}
		if len(a.Parameters) == 0 {
			bad("%s.parameters: none; give each file's digest as key \"MD5:<path in the model folder>\" and value its MD5 in hex", f)
		}
		for _, key := range sortedKeys(a.Parameters) {
			algo, path, ok := strings.Cut(key, ":")
			sum := strings.ToLower(a.Parameters[key])
			switch {
			case !ok:
				bad("%s.parameters[%q]: give the key as \"MD5:<path in the model folder>\"", f, key)
			case !strings.EqualFold(algo, "md5"):
				bad("%s.parameters[%q]: %s digests are not checked; the checksum agent checks MD5", f, key, algo)
			case !filepath.IsLocal(path):
				bad("%s.parameters[%q]: %q is not a file in the model folder", f, key, path)
			case len(sum) != 2*md5.Size || strings.Trim(sum, "0123456789abcdef") != "":
				bad("%s.parameters[%q]: %q is not an MD5 digest (32 hex digits)", f, key, a.Parameters[key])
			default:
				if out == nil {
					out = map[string]string{}
				}
				out[filepath.ToSlash(filepath.Clean(path))] = sum
			}
		}
	}
	return out
}

// verifyChecksums checks the files the checksum agent names against their
// digests (from digests when it is set: a file unchanged since it was last
// read is not read again).
func (m *Model) verifyChecksums(digests *DigestCache) error {
	sum := FileMD5
	if digests != nil {
		sum = digests.MD5
	}
	for _, path := range sortedKeys(m.Config.Checksums) {
		want := m.Config.Checksums[path]
		f := filepath.Join(m.Dir, filepath.FromSlash(path))
		got, err := sum(f)
		if err != nil {
			return invalidFile(f, "the checksum agent's file", err)
		}
		if got != want {
			return invalid(f, fmt.Errorf("checksum agent: MD5 %s, but the configuration expects %s: the file is not the one the configuration was written for", got, want))
		}
	}
	return nil
}

// FileMD5 is the MD5 digest of the file at path, in lowercase hex.
func FileMD5(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := md5.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// TritonAgents is the checksum agent of checksums as a ModelConfig gives
// it; nil for none.
func TritonAgents(checksums map[string]string) *tritonpb.ModelRepositoryAgents {
	if len(checksums) == 0 {
		return nil
	}
	params := map[string]string{}
	for path, sum := range checksums {
		params["MD5:"+path] = sum
	}
	return &tritonpb.ModelRepositoryAgents{Agents: []*tritonpb.ModelRepositoryAgents_Agent{{Name: ChecksumAgent, Parameters: params}}}
}
