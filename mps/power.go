package mps

import "github.com/NVIDIA/go-nvml/pkg/nvml"

// Power is what NVML says of a GPU's power.
type Power struct {
	// Watts is the GPU's draw as the driver last sampled it.
	Watts float64 `json:"watts"`
	// LimitWatts is the limit the driver holds the draw to; 0 when NVML
	// does not say.
	LimitWatts float64 `json:"limit_watts,omitempty"`
	// EnergyJoules is the energy the GPU used since the daemon first read
	// its count (NVML counts from the driver's load; Triton's
	// nv_energy_consumption counts from the server's start, as this does);
	// 0 where the GPU keeps no count (before Volta).
	EnergyJoules float64 `json:"energy_joules,omitempty"`
}

// readPower reads d's power from h into d.Power, nil where NVML gives no
// draw (a GPU that does not measure it). The energy counts from d's first
// reading, and from the next one after the driver's count went back (a
// driver reloaded): a counter that restarts at 0, as Prometheus reads one.
func readPower(h nvml.Device, d *Device) {
	mw, err := call("get power usage", h.GetPowerUsage)
	if err != nil {
		d.Power = nil
		return
	}
	p := &Power{Watts: float64(mw) / 1000}
	if limit, err := call("get enforced power limit", h.GetEnforcedPowerLimit); err == nil {
		p.LimitWatts = float64(limit) / 1000
	}
	if mj, err := call("get total energy consumption", h.GetTotalEnergyConsumption); err == nil {
		if !d.energyCounted || mj < d.energyFrom {
			d.energyFrom, d.energyCounted = mj, true
		}
		p.EnergyJoules = float64(mj-d.energyFrom) / 1000
	}
	d.Power = p
}
