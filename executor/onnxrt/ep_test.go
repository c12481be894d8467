package onnxrt

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	ort "github.com/yalue/onnxruntime_go"

	"github.com/gpulet/gpuletd/internal/fakeep"
)

// TestABIPositions calls every OrtApi function gpuletd reaches by position,
// so a wrong position fails here rather than on a GPU server.
func TestABIPositions(t *testing.T) {
	initORT(t)

	// CreateStatus, GetErrorMessage, ReleaseStatus.
	require.EqualError(t, statusRoundTrip("probe message"), "probe message")

	// GetEpDevices, EpDevice_*, HardwareDevice_*, GetKeyValuePairs.
	devs, err := EPDevices()
	require.NoError(t, err)
	cpu, err := FindEPDevice(EPNameCPU)
	require.NoError(t, err)
	require.Equal(t, "cpu", cpu.Type)
	require.NotEmpty(t, cpu.EPVendor)
	require.NotEmpty(t, devs)
	t.Logf("devices: %+v", devs)

	// The OrtSessionOptions* gpuletd passes is onnxruntime_go's own:
	// AddSessionConfigEntry through it is seen by onnxruntime_go.
	so, err := ort.NewSessionOptions()
	require.NoError(t, err)
	defer func() { _ = so.Destroy() }()
	require.NoError(t, addConfigEntry(sessionOptionsPointer(so), "gpuletd.test", "yes"))
	got, err := so.GetSessionConfigEntry("gpuletd.test")
	require.NoError(t, err)
	require.Equal(t, "yes", got)

	// SessionOptionsAppendExecutionProvider_V2: the CPU provider's device,
	// with an option, runs a model.
	require.NoError(t, AppendProvider(so, cpu, map[string]string{"gpuletd_option": "1"}))
	path, _ := writeZooModel(t, "mlp")
	sess, err := ort.NewDynamicAdvancedSession(path, []string{"input"}, []string{"output"}, so)
	require.NoError(t, err)
	in, err := ort.NewTensor(ort.NewShape(1, 784), make([]float32, 784))
	require.NoError(t, err)
	defer func() { _ = in.Destroy() }()
	outs := []ort.Value{nil}
	require.NoError(t, sess.Run([]ort.Value{in}, outs))
	require.Equal(t, ort.NewShape(1, 10), outs[0].GetShape())
	_ = outs[0].Destroy()
	require.NoError(t, sess.Destroy())
}

func TestRegisterProvider(t *testing.T) {
	initORT(t)
	dir := t.TempDir()
	tests := []struct {
		name    string
		kind    fakeep.Kind
		wantErr string
		missing string
	}{
		{name: "failing", kind: fakeep.Failing, wantErr: fakeep.Message},
		{name: "missing-dependency", kind: fakeep.MissingDependency,
			wantErr: fakeep.MissingLibrary + ": cannot open shared object file", missing: fakeep.MissingLibrary},
		{name: "not-a-plugin", kind: fakeep.NotPlugin, wantErr: "CreateEpFactories"},
		{name: "empty", kind: fakeep.Empty},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lib := fakeep.Build(t, dir, "lib"+tt.name+".so", tt.kind)
			err := RegisterProvider("fake-"+tt.name, lib)
			if tt.wantErr == "" {
				require.NoError(t, err)
				require.NoError(t, RegisterProvider("fake-"+tt.name, lib), "once per process")
				_, err := FindEPDevice("FakeExecutionProvider")
				require.ErrorIs(t, err, ErrNoEPDevice)
				require.ErrorContains(t, err, EPNameCPU)
				require.NoError(t, UnregisterProvider("fake-"+tt.name))
				return
			}
			require.ErrorIs(t, err, ErrProviderLoad)
			require.ErrorContains(t, err, tt.wantErr)
			require.NotContains(t, err.Error(), "\n")
			require.Equal(t, tt.missing, MissingLibrary(err))
		})
	}

	err := RegisterProvider("absent", filepath.Join(dir, CUDAProviderLibrary))
	require.ErrorIs(t, err, ErrProviderLoad)
	require.ErrorIs(t, err, ErrProviderNotInstalled)
	require.ErrorContains(t, err, "does not exist")
}

func TestProviderLibraryPath(t *testing.T) {
	lib := initORT(t)
	p, err := ProviderLibraryPath(CUDAProviderLibrary)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(filepath.Dir(lib), CUDAProviderLibrary), p)
}
