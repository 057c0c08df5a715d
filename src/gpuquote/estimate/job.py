"""The Job and Hardware inputs of DESIGN.md section 3, validated once and then hashable.

Validation errors become one-line BadInput messages naming the field and the accepted values.
Defaults that the caller did not set are reported back in `assumptions` (see `defaults_used`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator

from gpuquote.errors import BadInput
from gpuquote.hardware.interconnect import INTER_NODE_KINDS, INTRA_NODE
from gpuquote.i18n import Msg, Text
from gpuquote.models import Architecture, architecture_from_dict, get_model

Kind = Literal["train", "infer", "compute"]
Method = Literal["pretrain", "full", "lora", "qlora"]
Precision = Literal["fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4", "fp64"]
Optimizer = Literal["adamw", "adamw-8bit", "sgd", "adafactor", "lion"]
Sharding = Literal["none", "zero1", "zero2", "zero3", "fsdp", "hsdp"]
Checkpointing = Literal["none", "selective", "full"]
Offload = Literal["none", "optimizer", "parameters"]
KVPrecision = Literal["fp32", "bf16", "fp16", "fp8", "int8"]
Engine = Literal["trtllm", "vllm", "sglang", "tgi", "llama.cpp", "gpt-fast"]
ENGINES: tuple[str, ...] = Engine.__args__  # type: ignore[attr-defined]
IntraNode = Literal["nvswitch", "nvlink", "pcie", "none", "unknown"]
InterKind = Literal["ib", "roce", "ethernet", "omnipath", "none", "unknown"]

assert set(IntraNode.__args__) == set(INTRA_NODE) and set(InterKind.__args__) == set(INTER_NODE_KINDS)  # type: ignore[attr-defined]

_FROZEN = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)


class InterNode(BaseModel):
    model_config = _FROZEN
    kind: InterKind = "unknown"
    gbps_per_node: float | None = Field(default=None, gt=0, le=100_000)


class Hardware(BaseModel):
    """Where a job runs: GPU SKU, count, node shape and links (an offer's facts)."""

    model_config = _FROZEN
    gpu: str | None = None
    gpus: int | None = Field(default=None, ge=1, le=1_000_000)
    gpus_per_node: int | None = Field(default=None, ge=1, le=72)
    intra_node: IntraNode | None = None
    inter_node: InterNode | None = None
    power_limit_w: float | None = Field(default=None, gt=0, le=5000)
    cpu_cores_per_gpu: float | None = Field(default=None, gt=0, le=1024)
    nvme_write_gbs: float | None = Field(default=None, gt=0, le=1000)


class DataSpec(BaseModel):
    model_config = _FROZEN
    dataset_gb: float | None = Field(default=None, ge=0)
    egress_gb: float | None = Field(default=None, ge=0)
    checkpoints_kept: int | None = Field(default=None, ge=0, le=10_000)


class Job(BaseModel):
    """What to run. `arch` is the resolved Architecture (preset or inline)."""

    model_config = _FROZEN
    _key: tuple | None = PrivateAttr(default=None)
    _hash: int | None = PrivateAttr(default=None)
    kind: Kind = "train"
    model: str | None = None
    arch: Architecture | None = Field(default=None, exclude=True)
    method: Method = "full"
    precision: Precision = "bf16"
    optimizer: Optimizer = "adamw"
    sharding: Sharding | None = None
    tensor_parallel: int | None = Field(default=None, ge=1, le=1024)
    pipeline_parallel: int | None = Field(default=None, ge=1, le=1024)
    context_parallel: int = Field(default=1, ge=1, le=1024)
    sequence_parallel: bool | None = None
    seq_len: int | None = Field(default=None, ge=1, le=10_000_000)
    micro_batch: int | None = Field(default=None, ge=1, le=65_536)
    global_batch_tokens: float | None = Field(default=None, gt=0, le=1e10)
    activation_checkpointing: Checkpointing | None = None
    flash_attention: bool = True
    offload: Offload = "none"
    optimizer_in_backward: bool = False
    lora_rank: int = Field(default=16, ge=1, le=65_536)
    tokens: float | None = Field(default=None, gt=0, le=1e16)
    goodput: float | None = Field(default=None, gt=0, le=1)
    data: DataSpec | None = None
    # inference
    prompt_tokens: int = Field(default=512, ge=1, le=10_000_000)
    output_tokens: int = Field(default=256, ge=1, le=10_000_000)
    batch: int | Literal["max"] | None = None
    samples_per_prompt: int = Field(default=1, ge=1, le=100_000)
    requests_per_s: float | None = Field(default=None, gt=0, le=1e7)
    total_requests: float | None = Field(default=None, gt=0, le=1e13)
    max_ttft_ms: float | None = Field(default=None, gt=0)
    max_tpot_ms: float | None = Field(default=None, gt=0)
    max_model_len: int | None = Field(default=None, ge=1, le=10_000_000)
    gpu_memory_utilization: float = Field(default=0.9, gt=0.05, le=1.0)
    kv_cache_precision: KVPrecision | None = None
    engine: Engine | None = None  # serving engine: kernel efficiency and batching (data/calibration.yaml)
    # compute
    flops: float | None = Field(default=None, gt=0, le=1e32)
    efficiency: float | None = Field(default=None, gt=0, le=1)
    hardware: Hardware | None = None

    @model_validator(mode="before")
    @classmethod
    def _resolve_arch(cls, v: Any) -> Any:
        if not isinstance(v, dict):
            return v
        v = dict(v)
        arch = v.pop("architecture", None)
        if v.get("arch") is not None:
            return v
        if arch is not None:
            if isinstance(arch, Architecture):
                v["arch"] = arch
            else:
                v["arch"] = architecture_from_dict(arch, name=str(v.get("model") or "custom"))
        elif v.get("model") is not None:
            v["arch"] = get_model(str(v["model"]))
        return v

    @model_validator(mode="after")
    def _check(self) -> Job:
        if self.kind in ("train", "infer") and self.arch is None:
            raise BadInput(
                "model: a train/infer job needs `model:` (a preset id) or `architecture:`", field="model"
            )
        if self.kind == "compute" and self.flops is None:
            raise BadInput(
                "flops: a compute job needs `flops:` (total FLOPs) and `precision:`", field="flops"
            )
        if self.kind == "train" and self.precision in ("int8", "int4"):
            raise BadInput(
                f"precision: {self.precision} is for inference weights; training accepts "
                "fp32, tf32, bf16, fp16, fp8",
                field="precision",
                accepted=["fp32", "tf32", "bf16", "fp16", "fp8"],
            )
        if self.arch is not None:
            for f in ("tensor_parallel",):
                tp = getattr(self, f)
                if tp and self.arch.heads % tp:
                    raise BadInput(
                        f"{f}: {tp} does not divide the {self.arch.heads} attention heads; accepted: "
                        + ", ".join(str(d) for d in _divisors(self.arch.heads)),
                        field=f,
                        accepted=[str(d) for d in _divisors(self.arch.heads)],
                    )
            depth = self.arch.layers + self.arch.encoder_layers
            pp = self.pipeline_parallel
            if pp and pp > depth:
                from gpuquote.i18n import t

                raise BadInput(
                    t("hostile.pp_layers", pp=pp, depth=depth),
                    field="pipeline_parallel",
                    accepted=[f"1..{depth}"],
                )
        return self

    # ---- helpers ----------------------------------------------------------------------------
    def is_set(self, name: str) -> bool:
        return name in self.model_fields_set

    def cache_key(self) -> tuple:
        # which fields were stated matters as much as their values: a stated field is kept by the
        # layout search and reported differently in `assumptions` (context_parallel: 1 vs the default 1).
        # Memoised: the estimate caches hash a job tens of thousands of times per plan, and the job is frozen.
        priv = self.__pydantic_private__  # read directly: BaseModel.__getattr__ is slow on this hot path
        k = priv["_key"]
        if k is None:
            k = priv["_key"] = (self.model_dump_json(), tuple(sorted(self.model_fields_set)), self.arch)
            priv["_hash"] = hash(k)
        return k

    def __copy__(self) -> Job:  # model_copy(update=...) copies through here: the copy computes its own key
        c = super().__copy__()
        c.__pydantic_private__.update(_key=None, _hash=None)
        return c

    def __deepcopy__(self, memo: dict | None = None) -> Job:
        c = super().__deepcopy__(memo)
        c.__pydantic_private__.update(_key=None, _hash=None)
        return c

    def __hash__(self) -> int:  # pydantic's frozen hash covers fields incl. arch
        h = self.__pydantic_private__["_hash"]
        if h is None:
            self.cache_key()
            h = self.__pydantic_private__["_hash"]
        return h

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, Job) and self.cache_key() == other.cache_key())


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def _short(v: Any, limit: int = 80) -> str:
    """repr of a bad value, cut to one short line (a 5 MB value must not become a 5 MB message)."""
    r = " ".join(repr(v).split())
    return r if len(r) <= limit else r[: limit - 3] + "..."


def _one_line(e: ValidationError) -> BadInput:
    err = e.errors()[0]
    loc = ".".join(str(x) for x in err["loc"] if not isinstance(x, int)) or "job"
    loc = loc.replace("function-after[_check(), Job]", "").strip(".") or "job"
    ctx = err.get("ctx") or {}
    accepted = None
    if "expected" in ctx:
        accepted = [
            a.strip(" '") for a in str(ctx["expected"]).replace(" or ", ",").split(",") if a.strip(" '")
        ]
    msg = pydantic_message(err)
    if err["type"] == "extra_forbidden":
        fields = [*Job.model_fields.keys(), "architecture"]
        fields.remove("arch")
        return BadInput(Msg("err.job.unknown_field", field=loc, accepted=", ".join(fields)), field=loc,
                        accepted=fields)
    if "literal" in err["type"] and accepted:
        msg = Msg("err.pyd.got_accepted", got=_short(err.get("input")), accepted=", ".join(accepted))
    elif "input" in err and err["type"] not in ("missing",):
        msg = msg + Msg("err.pyd.got", got=_short(err["input"]))
    return BadInput(Text(f"{loc}: ", msg), field=loc, accepted=accepted)


#: pydantic error types shown from the catalogs (err.pyd.<type>), with the context values they name.
PYDANTIC_TYPES = ("missing", "greater_than", "greater_than_equal", "less_than", "less_than_equal", "float_parsing",
                  "float_type", "int_parsing", "int_type", "int_from_float", "bool_parsing", "bool_type", "string_type",
                  "dict_type", "list_type", "finite_number")


def pydantic_message(err: dict) -> str:
    """pydantic's English message for one error as a catalog sentence (err.pyd.<type>), so it reads in the
    reader's language; an error type the catalogs do not know keeps pydantic's own words."""
    if err.get("type") not in PYDANTIC_TYPES:
        return str(err.get("msg", ""))
    ctx = {k: (str(int(v)) if v.is_integer() else f"{v:g}") if isinstance(v, float) else v
           for k, v in (err.get("ctx") or {}).items() if isinstance(v, int | float | str)}
    raw = {k: v for k, v in (err.get("ctx") or {}).items() if isinstance(v, int | float | str)}
    for params in (ctx, raw):  # pydantic writes 0.0 as '0' and 1e16 as '10000000000000000'
        try:
            m = Msg("err.pyd." + err["type"], **params)
        except (KeyError, IndexError):
            break
        if m == err.get("msg"):
            return m
    return str(err.get("msg", ""))


def load_job(src: str | Path | dict | Job, **overrides: Any) -> Job:
    """A Job from a YAML/JSON file path, a mapping, or a Job; `overrides` replace top-level fields."""
    if isinstance(src, Job) and not overrides:
        return src
    if isinstance(src, Job):
        data: dict = src.model_dump(exclude_unset=True)
        data["arch"] = src.arch
    elif isinstance(src, dict):
        data = dict(src)
    else:
        p = Path(src)
        if not p.exists():
            raise BadInput(Msg("err.job.not_found", path=str(p)), field="job")
        from gpuquote.safeload import load_yaml

        try:
            raw = p.read_bytes()
        except OSError as e:
            raise BadInput(Msg("err.job.cannot_read", path=str(p), error=type(e).__name__), field="job") from None
        data = load_yaml(raw, "job")
        if not isinstance(data, dict):
            raise BadInput(Msg("err.job.not_mapping"), field="job")
    data.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return Job.model_validate(data)
    except ValidationError as e:
        raise _one_line(e) from None


def merge_hardware(job: Job, hardware: Hardware | dict | None = None, **flags: Any) -> Hardware:
    """The job's `hardware:` section, overridden by an explicit Hardware and then by CLI flags."""
    base = job.hardware.model_dump(exclude_unset=True) if job.hardware else {}
    if isinstance(hardware, Hardware):
        base.update(hardware.model_dump(exclude_unset=True))
    elif isinstance(hardware, dict):
        base.update(hardware)
    base.update({k: v for k, v in flags.items() if v is not None})
    try:
        return Hardware.model_validate(base)
    except ValidationError as e:
        err = _one_line(e)
        raise BadInput(f"hardware.{err}", field=f"hardware.{err.field}", accepted=err.accepted) from None
