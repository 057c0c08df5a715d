"""Transformer architecture numbers and the counts derived from them.

Parameter counts are computed from the shape (GQA, gated MLPs, tied embeddings, MoE, MLA,
encoder-decoder) rather than copied, so an inline `architecture:` gets the same treatment as a
preset, and presets are checked against their published totals in the tests.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from functools import cached_property

from gpuquote.errors import BadInput

MLPS = ("swiglu", "geglu", "gelu", "relu")
ATTENTIONS = ("mha", "mla")
NORMS = ("rmsnorm", "layernorm")
GATED = ("swiglu", "geglu")


@dataclass(frozen=True)
class Architecture:
    """The shape of a decoder-only (or encoder-decoder) transformer."""

    layers: int
    hidden: int
    heads: int
    ffn_hidden: int
    vocab: int
    kv_heads: int | None = None
    head_dim: int | None = None
    mlp: str = "swiglu"
    tied_embeddings: bool = False
    norm: str = "rmsnorm"
    bias: bool = False  # biases on every linear layer (GPT-3, OPT, BLOOM)
    qkv_bias: bool = False  # biases on q/k/v only (Qwen2)
    position_embeddings: int = 0  # learned absolute positions (GPT-3, OPT); 0 for RoPE/ALiBi
    # Mixture of experts: `experts` routed experts of width moe_ffn_hidden (default ffn_hidden),
    # `active_experts` per token, `shared_experts` always on; the first `dense_layers` are dense.
    experts: int = 0
    active_experts: int = 0
    shared_experts: int = 0
    moe_ffn_hidden: int | None = None
    dense_layers: int = 0
    # Multi-head latent attention (DeepSeek-V2/V3): the KV cache holds kv_lora_rank + qk_rope_head_dim.
    attention: str = "mha"
    q_lora_rank: int = 0
    kv_lora_rank: int = 0
    qk_rope_head_dim: int = 0
    qk_nope_head_dim: int = 0
    v_head_dim: int = 0
    # Encoder-decoder (T5 family): `layers` is the decoder depth when these are set.
    encoder_layers: int = 0
    decoder_layers: int = 0
    params_b: float | None = None  # published total, for checks and as the stated size
    active_params_b: float | None = None
    name: str = field(default="custom", compare=False)
    source: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        for f in ("layers", "hidden", "heads", "ffn_hidden", "vocab"):
            v = getattr(self, f)
            if not isinstance(v, int) or v <= 0:
                raise BadInput(
                    f"architecture.{f}: must be a positive integer, got {v!r}", field=f"architecture.{f}"
                )
        if self.mlp not in MLPS:
            raise BadInput(
                f"architecture.mlp: '{self.mlp}' not one of {', '.join(MLPS)}",
                field="architecture.mlp",
                accepted=list(MLPS),
            )
        if self.attention not in ATTENTIONS:
            raise BadInput(
                f"architecture.attention: '{self.attention}' not one of {', '.join(ATTENTIONS)}",
                field="architecture.attention",
                accepted=list(ATTENTIONS),
            )
        if self.norm not in NORMS:
            raise BadInput(
                f"architecture.norm: '{self.norm}' not one of {', '.join(NORMS)}",
                field="architecture.norm",
                accepted=list(NORMS),
            )
        kv = self.kv_heads or self.heads
        if kv <= 0 or self.heads % kv:
            raise BadInput(
                f"architecture.kv_heads: {kv} must divide heads ({self.heads})", field="architecture.kv_heads"
            )
        if self.experts and not 0 < self.active_experts <= self.experts:
            raise BadInput(
                f"architecture.active_experts: must be 1..experts ({self.experts})",
                field="architecture.active_experts",
            )

    # ---- shape helpers -------------------------------------------------------------------
    @property
    def n_kv_heads(self) -> int:
        return self.kv_heads or self.heads

    @property
    def dim_head(self) -> int:
        return self.head_dim or self.hidden // self.heads

    @property
    def gated(self) -> bool:
        return self.mlp in GATED

    @property
    def is_moe(self) -> bool:
        return self.experts > 0

    @property
    def is_encoder_decoder(self) -> bool:
        return self.encoder_layers > 0

    @property
    def dec_layers(self) -> int:
        return self.decoder_layers or self.layers

    @property
    def total_layers(self) -> int:
        return self.encoder_layers + self.dec_layers

    @property
    def q_width(self) -> int:
        """Width of the query/attention output (heads x head dim)."""
        if self.attention == "mla":
            return self.heads * (self.qk_nope_head_dim + self.qk_rope_head_dim)
        return self.heads * self.dim_head

    @property
    def attn_out_width(self) -> int:
        if self.attention == "mla":
            return self.heads * self.v_head_dim
        return self.heads * self.dim_head

    @property
    def kv_width(self) -> int:
        """Width of K plus V projections per token (activations, not the cache)."""
        if self.attention == "mla":
            return self.heads * (self.qk_nope_head_dim + self.qk_rope_head_dim + self.v_head_dim)
        return 2 * self.n_kv_heads * self.dim_head

    # ---- parameter counts ----------------------------------------------------------------
    def _attn_params(self) -> int:
        h = self.hidden
        if self.attention == "mla":
            q_dim = self.heads * (self.qk_nope_head_dim + self.qk_rope_head_dim)
            q = (
                (h * self.q_lora_rank + self.q_lora_rank + self.q_lora_rank * q_dim)
                if self.q_lora_rank
                else h * q_dim
            )
            kv_a = h * (self.kv_lora_rank + self.qk_rope_head_dim) + self.kv_lora_rank
            kv_b = self.kv_lora_rank * self.heads * (self.qk_nope_head_dim + self.v_head_dim)
            return q + kv_a + kv_b + self.heads * self.v_head_dim * h
        qd = self.heads * self.dim_head
        kvd = self.n_kv_heads * self.dim_head
        n = h * qd + 2 * h * kvd + qd * h
        if self.bias:
            n += qd + 2 * kvd + h
        elif self.qkv_bias:
            n += qd + 2 * kvd
        return n

    def _mlp_params(self, width: int) -> int:
        mats = 3 if self.gated else 2
        n = mats * self.hidden * width
        if self.bias:
            n += (2 if self.gated else 1) * width + self.hidden
        return n

    def _norm_params(self) -> int:
        return self.hidden * (2 if self.norm == "layernorm" else 1)

    @cached_property
    def _counts(self) -> dict[str, int]:
        h = self.hidden
        attn = self._attn_params()
        dense_mlp = self._mlp_params(self.ffn_hidden)
        norms = 2 * self._norm_params()
        embedding = self.vocab * h + self.position_embeddings * h
        head = 0 if self.tied_embeddings else self.vocab * h
        final_norm = self._norm_params() * (2 if self.is_encoder_decoder else 1)
        if self.is_moe:
            ew = self.moe_ffn_hidden or self.ffn_hidden
            expert = self._mlp_params(ew)
            router = h * self.experts
            moe_layers = self.dec_layers - self.dense_layers
            moe_total = self.experts * expert + self.shared_experts * expert + router
            moe_active = self.active_experts * expert + self.shared_experts * expert + router
            layer_total = attn + norms + moe_total
            body_total = self.dense_layers * (attn + norms + dense_mlp) + moe_layers * layer_total
            body_active = self.dense_layers * (attn + norms + dense_mlp) + moe_layers * (
                attn + norms + moe_active
            )
            largest_layer = max(layer_total, attn + norms + dense_mlp)
        else:
            dec_layer = attn + norms + dense_mlp
            enc_layer = attn + norms + dense_mlp
            cross = (attn + self._norm_params()) if self.is_encoder_decoder else 0
            body_total = self.encoder_layers * enc_layer + self.dec_layers * (dec_layer + cross)
            body_active = body_total
            largest_layer = dec_layer + cross
        total = embedding + head + body_total + final_norm
        active = embedding + head + body_active + final_norm
        return {
            "total": total,
            "active": active,
            "embedding": embedding,
            "head": head,
            "body": body_total,
            "layer": largest_layer,
            "body_active": body_active,
            "attn": attn,
        }

    @property
    def total_params(self) -> int:
        """All weights, embeddings and LM head included (a tied head counted once)."""
        return self._counts["total"]

    @property
    def active_params(self) -> int:
        """Weights one token passes through (MoE: routed-in experts only)."""
        return self._counts["active"]

    @property
    def embedding_params(self) -> int:
        """Input embedding table (+ learned positions): looked up, not multiplied."""
        return self._counts["embedding"]

    @property
    def head_params(self) -> int:
        return self._counts["head"]

    @property
    def layer_params(self) -> int:
        """Largest single transformer block (the FSDP/ZeRO-3 gather unit)."""
        return self._counts["layer"]

    @property
    def body_params(self) -> int:
        return self._counts["body"]

    @property
    def matmul_params_active(self) -> int:
        """Weights in matrix multiplies per token: body (active experts) + LM head (tied or not)."""
        return self._counts["body_active"] + self.vocab * self.hidden

    @property
    def linear_params(self) -> int:
        """Weights in linear layers of the body (what 4-bit/8-bit quantisers convert)."""
        return self._counts["body"]

    def kv_bytes_per_token(self, bytes_per_value: float = 2.0) -> float:
        """KV cache per token: 2 x layers x kv_heads x head_dim x bytes (MLA: the latent + RoPE key)."""
        if self.attention == "mla":
            return self.dec_layers * (self.kv_lora_rank + self.qk_rope_head_dim) * bytes_per_value
        return 2 * self.dec_layers * self.n_kv_heads * self.dim_head * bytes_per_value

    def attention_flops_per_token(self, context: float) -> float:
        """Forward FLOPs of QK^T and AV for one token attending to `context` tokens."""
        qk = self.q_width
        av = self.attn_out_width
        return 2.0 * self.dec_layers * context * (qk + av) + (
            2.0 * self.encoder_layers * context * (qk + av) * 2 if self.is_encoder_decoder else 0.0
        )

    def to_dict(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d.update(
            total_params=self.total_params,
            active_params=self.active_params,
            embedding_params=self.embedding_params,
            kv_bytes_per_token_bf16=self.kv_bytes_per_token(2),
        )
        return d


ARCH_FIELDS = tuple(f.name for f in fields(Architecture))


def architecture_from_dict(d: dict, *, name: str = "custom", source: str = "") -> Architecture:
    """Build an Architecture from a YAML mapping; unknown keys are an error naming them."""
    if not isinstance(d, dict):
        raise BadInput(
            "architecture: must be a mapping of shape fields",
            field="architecture",
            accepted=list(ARCH_FIELDS),
        )
    unknown = sorted(set(d) - set(ARCH_FIELDS))
    if unknown:
        raise BadInput(
            f"architecture: unknown field(s) {', '.join(unknown)}; accepted: {', '.join(ARCH_FIELDS)}",
            field="architecture",
            accepted=list(ARCH_FIELDS),
        )
    missing = [
        k
        for k in ("layers", "hidden", "heads", "ffn_hidden", "vocab")
        if k not in d and not (k == "layers" and "decoder_layers" in d)
    ]
    if missing:
        raise BadInput(
            f"architecture: missing {', '.join(missing)}", field="architecture", accepted=list(ARCH_FIELDS)
        )
    kw = dict(d)
    if "layers" not in kw:
        kw["layers"] = kw["decoder_layers"]
    kw.setdefault("name", name)
    kw.setdefault("source", source)
    for k in ("params_b", "active_params_b"):
        if kw.get(k) is not None:
            kw[k] = float(kw[k])
    try:
        return Architecture(**kw)
    except TypeError as e:
        raise BadInput(f"architecture: {e}", field="architecture") from None
