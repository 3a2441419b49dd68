"""The two small models of the training-parity test and bench: a CNN and a GPT-style transformer.

Both are deterministic (dropout off, seeded init) and train with plain SGD, so the same step on npu
and on the CPU must give the same losses up to float rounding.
"""

from __future__ import annotations

import math
from typing import Callable

import torch
from torch import nn
from torch.nn import functional as F


class SmallCNN(nn.Module):
    """conv -> batchnorm -> relu -> max pool -> conv -> relu -> avg pool -> linear."""

    def __init__(self, classes: int = 10) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.fc = nn.Linear(16 * 2 * 2, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.avg_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(torch.flatten(x, 1))


class Block(nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.fc1, self.fc2 = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

    def attention(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=-1)
        q, k, v = (z.reshape(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(d // self.heads)
        causal = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)
        weights = scores.masked_fill(causal, float("-inf")).softmax(dim=-1)
        return self.proj((weights @ v).transpose(1, 2).reshape(b, t, d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.ln1(x))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class TinyGPT(nn.Module):
    """Token + position embeddings, pre-norm blocks (causal attention, GELU MLP), a tied-free LM head."""

    def __init__(self, vocab: int = 64, dim: int = 32, heads: int = 4, layers: int = 2, context: int = 16) -> None:
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, dim), nn.Embedding(context, dim)
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(layers))
        self.ln, self.head = nn.LayerNorm(dim), nn.Linear(dim, vocab)
        # A buffer, as GPT-2 implementations keep position ids: moved with the model, no arange per step.
        self.register_buffer("positions", torch.arange(context), persistent=False)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        x = self.tok(idx) + self.pos(self.positions[: idx.shape[1]])
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


def cnn_setup() -> tuple[nn.Module, Callable[[nn.Module, str], torch.Tensor], torch.Tensor, torch.Tensor]:
    torch.manual_seed(0)
    model = SmallCNN()
    images, labels = torch.randn(8, 3, 8, 8), torch.randint(0, 10, (8,))
    return model, lambda m, dev: F.cross_entropy(m(images.to(dev)), labels.to(dev)), images, labels


def gpt_setup() -> tuple[nn.Module, Callable[[nn.Module, str], torch.Tensor], torch.Tensor, torch.Tensor]:
    torch.manual_seed(0)
    model = TinyGPT()
    tokens = torch.randint(0, 64, (4, 17))
    inputs, targets = tokens[:, :-1], tokens[:, 1:]

    def loss(m: nn.Module, dev: str) -> torch.Tensor:
        logits = m(inputs.to(dev))
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1).to(dev))
    return model, loss, inputs, targets


def train(model: nn.Module, loss_fn: Callable[[nn.Module, str], torch.Tensor], device: str, steps: int,
          lr: float = 0.05) -> list[float]:
    """Losses of `steps` SGD steps of model (moved to device) on a fixed batch."""
    model = model.to(device)
    # foreach=False: the per-parameter update is plain aten ops (add_), the path under test.
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, foreach=False)
    losses = []
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model, device)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses
