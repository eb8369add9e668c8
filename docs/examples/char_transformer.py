"""A character-level transformer trained on a small text committed to the repo.

One pre-norm transformer block (causal multi-head self-attention + GELU MLP)
learns to predict the next character of data/tiny_text.txt (a short story
written for gradkit). The loss starts near ln(vocabulary) ≈ 3.8 and falls
below 2 within a few hundred steps; then the model writes a few lines.

    python docs/examples/char_transformer.py [--steps 300]
"""
from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np

import gradkit
import gradkit.nn.functional as F  # noqa: N812 - PyTorch's usual name
from gradkit import nn

TEXT = Path(__file__).resolve().parent / "data" / "tiny_text.txt"


class CausalSelfAttention(nn.Module):
    """Each position attends to itself and the positions before it."""

    def __init__(self, dim: int, heads: int, context: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        future = np.triu(np.ones((context, context), dtype=bool), k=1)
        self.register_buffer("future", gradkit.from_numpy(future), persistent=False)

    def forward(self, x):
        batch, time, dim = x.shape
        q, k, v = self.qkv(x).split(dim, dim=2)
        # (batch, heads, time, head_dim)
        q, k, v = (t.reshape(batch, time, self.heads, dim // self.heads).transpose(1, 2)
                   for t in (q, k, v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(dim // self.heads)
        scores = scores.masked_fill(self.future[:time, :time], float("-inf"))
        mixed = F.softmax(scores, dim=-1) @ v
        return self.out(mixed.transpose(1, 2).reshape(batch, time, dim))


class Block(nn.Module):
    def __init__(self, dim: int, heads: int, context: int) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attention = CausalSelfAttention(dim, heads, context)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU("tanh"), nn.Linear(4 * dim, dim))

    def forward(self, x):
        x = x + self.attention(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class TinyTransformer(nn.Module):
    def __init__(self, vocab: int, dim: int = 64, heads: int = 4, context: int = 32) -> None:
        super().__init__()
        self.context = context
        self.tokens = nn.Embedding(vocab, dim)
        self.positions = nn.Embedding(context, dim)
        self.block = Block(dim, heads, context)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, idx):
        time = idx.shape[1]
        x = self.tokens(idx) + self.positions(gradkit.arange(time))
        return self.head(self.norm(self.block(x)))


def generate(model: TinyTransformer, prompt: list[int], length: int,
             rng: np.random.Generator) -> list[int]:
    """Sample ``length`` characters after ``prompt`` (temperature 0.8)."""
    out = list(prompt)
    with gradkit.no_grad():
        for _ in range(length):
            window = gradkit.tensor([out[-model.context:]])
            logits = model(window)[0, -1] / 0.8
            probs = F.softmax(logits, dim=-1).numpy().astype(np.float64)
            out.append(int(rng.choice(len(probs), p=probs / probs.sum())))
    return out


def main(argv: list[str] | None = None) -> float:
    parser = argparse.ArgumentParser(description="character-level transformer")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=6e-3)
    parser.add_argument("--sample", type=int, default=200, help="characters to generate")
    args = parser.parse_args(argv)

    gradkit.manual_seed(0)
    text = TEXT.read_text(encoding="utf-8")
    chars = sorted(set(text))
    encoded = np.array([chars.index(c) for c in text], dtype=np.int64)
    model = TinyTransformer(len(chars))
    optimizer = gradkit.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    rng = np.random.default_rng(0)
    context = model.context
    print(f"{len(text)} characters, vocabulary of {len(chars)}, "
          f"{sum(p.numel() for p in model.parameters())} parameters")
    recent = []
    for step in range(1, args.steps + 1):
        starts = rng.integers(0, len(encoded) - context - 1, args.batch_size)
        windows = np.stack([encoded[s:s + context + 1] for s in starts])
        inputs, targets = gradkit.from_numpy(windows[:, :-1]), gradkit.from_numpy(windows[:, 1:])
        logits = model(inputs)
        loss = F.cross_entropy(logits.reshape(-1, len(chars)), targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        recent = (recent + [loss.item()])[-20:]
        if step % 50 == 0 or step == args.steps:
            print(f"step {step:4d}  loss {np.mean(recent):.3f}")
    if args.sample:
        prompt = [chars.index(c) for c in "The child "]
        print("".join(chars[i] for i in generate(model.eval(), prompt, args.sample, rng)))
    return float(np.mean(recent))


if __name__ == "__main__":
    main()
