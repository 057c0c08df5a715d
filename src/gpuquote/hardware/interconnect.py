"""Interconnect vocabularies shared by offers, quotes, jobs and the probe."""

from __future__ import annotations

INTRA_NODE = ("nvswitch", "nvlink", "pcie", "none", "unknown")
INTER_NODE_KINDS = ("ib", "roce", "ethernet", "omnipath", "none", "unknown")
FORM_FACTORS = ("pcie", "sxm", "oam", "other", "unknown")

#: Effective GPU-to-GPU bandwidth per GPU, GB/s one direction, for collective cost models.
#: NVSwitch: full NVLink bandwidth to every peer; NVLink without a switch (bridged pairs) reaches
#: one peer; PCIe 4.0 x16 ~25 GB/s achieved of 32 nominal per direction (stas00/ml-engineering).
PCIE_EFFECTIVE_GBS = {3: 12.0, 4: 25.0, 5: 50.0}
