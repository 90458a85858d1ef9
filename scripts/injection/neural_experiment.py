"""Leave-one-source-out experiment: a small character CNN against the linear model.

    python3 scripts/injection/neural_experiment.py /tmp/windows.jsonl \
        --folds agentdojo,deepset,ml_override,spikee --epochs 4 --out /tmp/neural.json
    python3 scripts/injection/neural_experiment.py /tmp/folds.jsonl --folds-file --epochs 3

The second form (ensemble) reads scripts/injection-export-folds.ts's export: the linear fold
model's logit and window of every row, so the CNN and the linear model are compared, and
ensembled, on the same folds with the pooled leave-one-source-out headline.

Reads the windows exported by scripts/injection-export-windows.ts (the normalized text of the
most suspicious 512-character window of every row, as the gateway's linear model picks it)
and, for each named family, trains the CNN on the fit split of every other family (coupled
families out too, as in scripts/injection-training.ts), sets its threshold at 1% FPR on the
other families' held-out benign rows, and reports the left-out family's TPR and FPR at it:
the per-fold protocol of `npm run eval:injection`, so the numbers compare with its fold
lines. No pretrained weights: characters of every script are hashed into 4,096 embeddings.
Seeded; CPU only (one thread, run it with `nice`). Nothing is shipped from it: it measures
whether a neural model is worth integrating.
"""

import argparse
import json
import math
import random
import time

import torch
from torch import nn

COUPLED = {"ml_override": {"xquad"}, "xquad": {"ml_override"}}
VOCAB = 4096
MAX_CHARS = 512


def char_ids(text: str) -> list:
    """Code points to embedding rows: Latin-1 as is, every other script hashed."""
    out = []
    for ch in text[:MAX_CHARS]:
        cp = ord(ch)
        out.append(1 + cp if cp < 255 else 256 + (cp * 2654435761) % (VOCAB - 256))
    return out or [0]


class CharCnn(nn.Module):
    """Embedding, three dilated convolutions, max and mean pooling, one logit."""

    def __init__(self, dim: int = 48, width: int = 96):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, dim, padding_idx=0)
        self.convs = nn.ModuleList(
            [
                nn.Conv1d(dim, width, 5, padding=2),
                nn.Conv1d(width, width, 5, padding=4, dilation=2),
                nn.Conv1d(width, width, 3, padding=4, dilation=4),
            ]
        )
        self.out = nn.Linear(2 * width, 1)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        mask = (ids > 0).unsqueeze(1).float()
        x = self.embed(ids).transpose(1, 2)
        for i, conv in enumerate(self.convs):
            y = nn.functional.gelu(conv(x))
            x = y if i == 0 else x + y
        x = x * mask
        pooled_max = (x - (1 - mask) * 1e4).max(dim=2).values
        pooled_mean = x.sum(dim=2) / mask.sum(dim=2).clamp(min=1)
        return self.out(torch.cat([pooled_max, pooled_mean], dim=1)).squeeze(1)


def batches(rows, size, shuffle, rng):
    order = list(range(len(rows)))
    if shuffle:
        rng.shuffle(order)
    for at in range(0, len(order), size):
        chunk = [rows[i] for i in order[at : at + size]]
        longest = max(len(r["ids"]) for r in chunk)
        ids = torch.zeros(len(chunk), longest, dtype=torch.long)
        for k, r in enumerate(chunk):
            ids[k, : len(r["ids"])] = torch.tensor(r["ids"])
        yield chunk, ids


def weights(rows):
    """1/sqrt(rows of the source family and label), then equal weight per class."""
    count = {}
    for r in rows:
        count[(r["family"], r["label"])] = count.get((r["family"], r["label"]), 0) + 1
    w = [count[(r["family"], r["label"])] ** -0.5 for r in rows]
    total = [0.0, 0.0]
    for r, x in zip(rows, w):
        total[r["label"]] += x
    return [x * len(rows) / 2 / total[r["label"]] for r, x in zip(rows, w)]


def train(rows, epochs, seed):
    torch.manual_seed(seed)
    rng = random.Random(seed)
    model = CharCnn()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-4)
    for r, w in zip(rows, weights(rows)):
        r["w"] = w
    steps = epochs * math.ceil(len(rows) / 64)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=2e-3, total_steps=steps)
    model.train()
    for _ in range(epochs):
        for chunk, ids in batches(rows, 64, True, rng):
            y = torch.tensor([float(r["label"]) for r in chunk])
            w = torch.tensor([r["w"] for r in chunk])
            loss = (nn.functional.binary_cross_entropy_with_logits(model(ids), y, reduction="none") * w).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
    return model


@torch.no_grad()
def logits(model, rows):
    model.eval()
    out = []
    for _, ids in batches(rows, 256, False, None):
        out.extend(model(ids).tolist())
    return out


def threshold_at(negatives, fpr=0.01):
    s = sorted(negatives, reverse=True)
    allowed = int(math.floor(fpr * len(s)))
    if allowed >= len(s):
        return -math.inf
    above = [x for x in s if x > s[allowed]]
    return min(above) if above else math.inf


def rate(values, t):
    return sum(v >= t for v in values) / len(values) if values else float("nan")


NOT_A_LANGUAGE = {"en", "code", "en/de", "mixed", "multi", None}


def pooled(folds, scorer):
    """The LOSO headline: each fold's test scores minus its 1%-FPR threshold on the pool, then
    one threshold at 1% FPR on every fold's benign test rows; TPR, non-English TPR, hard FPR."""
    pos, neg, non_en, hard = [], [], [], []
    for f in folds:
        t = threshold_at(f["pool"][scorer])
        for r, z in zip(f["test"], f["test_scores"][scorer]):
            (pos if r["label"] == 1 else neg).append(z - t)
            if r["label"] == 1 and r["lang"] not in NOT_A_LANGUAGE:
                non_en.append(z - t)
            if r["label"] == 0 and r["hard"]:
                hard.append(z - t)
    t = threshold_at(neg)
    return {"tpr": rate(pos, t), "non_english": rate(non_en, t), "hard_fpr": rate(hard, t),
            "positives": len(pos), "negatives": len(neg)}


def ensemble_main(a):
    """--folds-file: LOSO folds exported by scripts/injection-export-folds.ts (the linear fold
    model's logit and window per row). Trains the CNN per fold on the fold's fit rows and
    compares linear, CNN and linear + alpha * CNN with the pooled LOSO protocol."""
    by_fold = {}
    for line in open(a.windows, encoding="utf8"):
        r = json.loads(line)
        r["ids"] = char_ids(r["text"])
        by_fold.setdefault(r["fold"], {"fit": [], "pool": [], "test": []})[r["role"]].append(r)
    alphas = [float(x) for x in a.alphas.split(",")]
    sampler = random.Random(a.seed)
    for f in by_fold.values():
        # The augmented rows outnumber the real ones; a seeded sample keeps a fold in minutes.
        real = [r for r in f["fit"] if r["family"] != "augmented"]
        augmented = [r for r in f["fit"] if r["family"] == "augmented"]
        sampler.shuffle(augmented)
        f["fit"] = real + augmented[: a.max_augmented]
    folds = []
    for name, f in by_fold.items():
        started = time.time()
        model = train(f["fit"], a.epochs, a.seed)
        cnn_pool, cnn_test = logits(model, f["pool"]), logits(model, f["test"])
        lin_pool = [r["logit"] for r in f["pool"]]
        lin_test = [r["logit"] for r in f["test"]]
        fold = {"pool": {"linear": lin_pool, "cnn": cnn_pool},
                "test": f["test"], "test_scores": {"linear": lin_test, "cnn": cnn_test}}
        for alpha in alphas:
            key = f"linear+{alpha}*cnn"
            fold["pool"][key] = [x + alpha * y for x, y in zip(lin_pool, cnn_pool)]
            fold["test_scores"][key] = [x + alpha * y for x, y in zip(lin_test, cnn_test)]
        folds.append(fold)
        print(json.dumps({"fold": name, "seconds": round(time.time() - started)}), flush=True)
    report = {k: pooled(folds, k) for k in folds[0]["pool"]}
    print(json.dumps(report, indent=2))
    if a.out:
        with open(a.out, "w", encoding="utf8") as out:
            json.dump({"epochs": a.epochs, "seed": a.seed, "folds": list(by_fold),
                       "max_augmented": a.max_augmented, "pooled": report},
                      out, indent=2)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("windows")
    p.add_argument("--folds-file", action="store_true",
                   help="windows is an export of scripts/injection-export-folds.ts: ensemble mode")
    p.add_argument("--alphas", default="0.5,1")
    p.add_argument("--max-augmented", type=int, default=6000,
                   help="ensemble mode: at most this many augmented fit rows per fold")
    p.add_argument("--folds", default="agentdojo,deepset,ml_override,spikee")
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", default=None)
    a = p.parse_args()
    torch.set_num_threads(1)
    if a.folds_file:
        ensemble_main(a)
        return
    rows = [json.loads(line) for line in open(a.windows, encoding="utf8")]
    for r in rows:
        r["ids"] = char_ids(r["text"])
    results = []
    for family in a.folds.split(","):
        started = time.time()
        out = {family} | COUPLED.get(family, set())
        fit = [r for r in rows if r["family"] not in out and not r["holdout"]]
        model = train(fit, a.epochs, a.seed)
        pool = [r for r in rows if r["family"] not in out and r["holdout"] and r["label"] == 0]
        t = threshold_at(logits(model, pool))
        tested = [r for r in rows if r["family"] == family]
        z = logits(model, tested)
        pos = [x for x, r in zip(z, tested) if r["label"] == 1]
        neg = [x for x, r in zip(z, tested) if r["label"] == 0]
        result = {
            "family": family,
            "positives": len(pos),
            "negatives": len(neg),
            "tpr": rate(pos, t),
            "fpr": rate(neg, t),
            "seconds": round(time.time() - started),
        }
        print(json.dumps(result), flush=True)
        results.append(result)
    if a.out:
        with open(a.out, "w", encoding="utf8") as f:
            json.dump({"epochs": a.epochs, "seed": a.seed, "folds": results}, f, indent=2)


if __name__ == "__main__":
    main()
