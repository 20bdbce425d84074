"""The bid (otto.md 5): lower cost wins.

``cost = R*T_run*(1 + k*u) + R*T_prov + F + D*(T_wait + T_prov)``
"""

from __future__ import annotations

from dataclasses import dataclass

LOAD_SURCHARGE_K = 0.5
PROVISION_FEE_F = 0.01
DELAY_PRICE_D = 0.20  # per hour
DEFAULT_ESTIMATED_S = 60.0


@dataclass(frozen=True, slots=True)
class Breakdown:
    run: float
    load: float
    provision: float
    delay: float

    @property
    def total(self) -> float:
        return round(self.run + self.load + self.provision + self.delay, 6)

    def as_dict(self) -> dict[str, float]:
        return {"run": round(self.run, 6), "load": round(self.load, 6),
                "provision": round(self.provision, 6), "delay": round(self.delay, 6)}


def utilisation(memory_used: float, memory_total: float, cores_used: float, cores_total: float) -> float:
    """Mean of the memory and core fractions after placement."""
    mem = memory_used / memory_total if memory_total > 0 else 1.0
    cores = cores_used / cores_total if cores_total > 0 else 1.0
    return (mem + cores) / 2


def bid_cost(*, rate_per_hour: float, estimated_s: float | None, speed: float, utilisation: float,
             provision_s: float = 0.0, wait_s: float = 0.0, new_cell: bool = False) -> Breakdown:
    """The breakdown of one bid; ``new_cell`` adds the elastic provisioning terms."""
    t_run_h = (estimated_s if estimated_s is not None else DEFAULT_ESTIMATED_S) / speed / 3600
    run = rate_per_hour * t_run_h
    load = run * LOAD_SURCHARGE_K * utilisation
    t_prov_h = provision_s / 3600 if new_cell else 0.0
    provision = rate_per_hour * t_prov_h + (PROVISION_FEE_F if new_cell else 0.0)
    delay = DELAY_PRICE_D * (wait_s / 3600 + t_prov_h)
    return Breakdown(run, load, provision, delay)
