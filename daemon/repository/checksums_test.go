package repository

import (
	"crypto/md5"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// checksummed is the fake LeNet-like model's config.pbtxt with the
// checksum agent's parameters.
func checksummed(name string, params ...string) string {
	agent := `model_repository_agents { agents [ { name: "checksum", parameters [`
	for i := 0; i+1 < len(params); i += 2 {
		if i > 0 {
			agent += ","
		}
		agent += ` { key: "` + params[i] + `", value: "` + params[i+1] + `" }`
	}
	return strings.Replace(tritonLenet, `"bad"`, `"`+name+`"`, 1) + agent + " ] } ] }\n"
}

// TestChecksumAgent: Triton's checksum agent in a config.pbtxt loads a
// model whose files have the digests it gives, and refuses one whose file
// changed, naming the file and both digests.
func TestChecksumAgent(t *testing.T) {
	files := map[string]string{"1/model.onnx": "onnx", "labels.txt": "a\nb\n"}
	root := writeRepo(t, map[string]entry{
		"good":  pbtxtEntry(checksummed("good", "MD5:1/model.onnx", md5Hex("onnx"), "md5:labels.txt", strings.ToUpper(md5Hex("a\nb\n"))), files),
		"wrong": pbtxtEntry(checksummed("wrong", "MD5:1/model.onnx", md5Hex("other weights")), files),
		"gone":  pbtxtEntry(checksummed("gone", "MD5:1/weights.bin", md5Hex("onnx")), files),
	})
	digests := NewDigestCache()
	ix, err := Scan(Roots{root}, Options{Read: fakeReader, DefaultSLO: time.Second, Digests: digests})
	require.NoError(t, err)
	require.Equal(t, []string{"good"}, ix.Names())
	m, err := ix.Get("good")
	require.NoError(t, err)
	require.Equal(t, map[string]string{"1/model.onnx": md5Hex("onnx"), "labels.txt": md5Hex("a\nb\n")}, m.Config.Checksums)
	require.Equal(t, "checksum", TritonAgents(m.Config.Checksums).Agents[0].Name)
	require.Equal(t, md5Hex("onnx"), TritonAgents(m.Config.Checksums).Agents[0].Parameters["MD5:1/model.onnx"])

	wrong := filepath.Join(root, "wrong", "1", "model.onnx")
	require.ErrorIs(t, ix.Broken["wrong"], ErrInvalidModel)
	require.ErrorContains(t, ix.Broken["wrong"], wrong+": checksum agent: MD5 "+md5Hex("onnx")+", but the configuration expects "+md5Hex("other weights"))
	require.ErrorContains(t, ix.Broken["gone"], filepath.Join(root, "gone", "1", "weights.bin")+": the checksum agent's file: no such file or directory")

	// Read again unchanged, no file is hashed again; a file changed since
	// is, and refused.
	before := digests.Computed()
	_, err = Scan(Roots{root}, Options{Read: fakeReader, DefaultSLO: time.Second, Digests: digests})
	require.NoError(t, err)
	require.Equal(t, before, digests.Computed(), "unchanged files are not read again")
	require.NoError(t, os.WriteFile(filepath.Join(root, "good", "labels.txt"), []byte("a\nc\n"), 0o644))
	ix, err = Scan(Roots{root}, Options{Read: fakeReader, DefaultSLO: time.Second, Digests: digests})
	require.NoError(t, err)
	require.Empty(t, ix.Names())
	require.ErrorContains(t, ix.Broken["good"], filepath.Join(root, "good", "labels.txt")+": checksum agent: MD5 "+md5Hex("a\nc\n"))
}

func TestRepositoryAgentRefusals(t *testing.T) {
	v1 := map[string]string{"1/model.onnx": "onnx"}
	sum := md5Hex("onnx")
	for _, tc := range []struct {
		name, pbtxt, want string
	}{
		{"another agent", strings.Replace(checksummed("bad", "MD5:1/model.onnx", sum), `name: "checksum"`, `name: "decrypt"`, 1),
			`model_repository_agents.agents[0].name: "decrypt" is not run; gpuletd runs Triton's "checksum" agent alone`},
		{"another algorithm", checksummed("bad", "SHA256:1/model.onnx", sum), `"SHA256:1/model.onnx"]: SHA256 digests are not checked; the checksum agent checks MD5`},
		{"no algorithm", checksummed("bad", "1/model.onnx", sum), `give the key as "MD5:<path in the model folder>"`},
		{"a path out of the folder", checksummed("bad", "MD5:../x/model.onnx", sum), `"../x/model.onnx" is not a file in the model folder`},
		{"not a digest", checksummed("bad", "MD5:1/model.onnx", "abc"), `"abc" is not an MD5 digest (32 hex digits)`},
		{"no parameters", tritonLenet + `model_repository_agents { agents [ { name: "checksum" } ] }` + "\n", "parameters: none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := writeRepo(t, map[string]entry{"bad": pbtxtEntry(tc.pbtxt, v1)})
			ix, err := Scan(Roots{root}, Options{Read: fakeReader, DefaultSLO: time.Second})
			require.NoError(t, err)
			require.Empty(t, ix.Names())
			require.ErrorContains(t, onlyProblem(ix), tc.want)
		})
	}
}
