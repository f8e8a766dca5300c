"""Deterministic synthetic vaults for the benchmarks.

``make_corpus(root, n, seed)`` writes ``n`` markdown notes under ``root/notes/<folder>/`` that look
like an engineering team's long-term memory: YAML frontmatter (title, type, tags, dates, salience,
some ``links``), headings, ``[[wikilinks]]`` to other notes, identifiers such as ``ERR_PAY_504``
and a few percent of Chinese/Japanese notes. Word frequencies follow a Zipf curve over a few
hundred real words plus a long tail of made-up project names, so the index has a realistic
dictionary. ``make_queries(k, seed)`` returns short queries over the same vocabulary.

The same ``(n, seed)`` always gives byte-identical files.
"""

from __future__ import annotations

import bisect
import datetime as dt
import itertools
import random
from dataclasses import dataclass
from pathlib import Path

TYPES = ("decision", "fact", "preference", "problem", "context", "handoff", "note")
TYPE_WEIGHTS = (18, 22, 8, 14, 16, 7, 15)
LINK_TYPES = ("relates_to", "depends_on", "caused_by", "refines", "contradicts")

# Topic clusters: a note is mostly about one topic, so queries over a cluster find a few notes.
TOPICS: dict[str, tuple[str, ...]] = {
    "frontend": (
        "frontend",
        "react",
        "hotwire",
        "turbo",
        "stimulus",
        "component",
        "bundle",
        "webpack",
        "vite",
        "css",
        "tailwind",
        "accessibility",
        "render",
        "hydration",
        "browser",
        "form",
    ),
    "database": (
        "postgres",
        "mysql",
        "migration",
        "schema",
        "index",
        "vacuum",
        "replica",
        "query",
        "transaction",
        "deadlock",
        "partition",
        "backup",
        "restore",
        "column",
        "table",
        "sqlite",
    ),
    "payments": (
        "payment",
        "checkout",
        "invoice",
        "refund",
        "stripe",
        "provider",
        "currency",
        "ledger",
        "chargeback",
        "settlement",
        "subscription",
        "billing",
        "tax",
        "receipt",
        "webhook",
        "card",
    ),
    "infra": (
        "kubernetes",
        "terraform",
        "cluster",
        "node",
        "autoscaling",
        "ingress",
        "dns",
        "certificate",
        "load",
        "balancer",
        "container",
        "image",
        "registry",
        "helm",
        "region",
        "network",
    ),
    "auth": (
        "login",
        "oauth",
        "token",
        "session",
        "password",
        "mfa",
        "sso",
        "saml",
        "permission",
        "role",
        "audit",
        "secret",
        "rotation",
        "cookie",
        "jwt",
        "account",
    ),
    "search": (
        "search",
        "ranking",
        "bm25",
        "relevance",
        "embedding",
        "vector",
        "recall",
        "precision",
        "synonym",
        "stemming",
        "tokenizer",
        "snippet",
        "facet",
        "filter",
        "reindex",
        "latency",
    ),
    "mobile": (
        "ios",
        "android",
        "mobile",
        "push",
        "notification",
        "offline",
        "sync",
        "release",
        "testflight",
        "crash",
        "battery",
        "deeplink",
        "tablet",
        "gesture",
        "swift",
        "kotlin",
    ),
    "observability": (
        "alert",
        "metric",
        "dashboard",
        "tracing",
        "span",
        "log",
        "grafana",
        "prometheus",
        "sentry",
        "pager",
        "oncall",
        "slo",
        "error",
        "budget",
        "latency",
        "incident",
    ),
    "team": (
        "hiring",
        "interview",
        "onboarding",
        "retro",
        "standup",
        "roadmap",
        "okr",
        "review",
        "mentoring",
        "feedback",
        "vacation",
        "budget",
        "headcount",
        "planning",
        "sprint",
        "offsite",
    ),
    "data": (
        "pipeline",
        "warehouse",
        "etl",
        "airflow",
        "dbt",
        "parquet",
        "kafka",
        "stream",
        "batch",
        "snowflake",
        "report",
        "analytics",
        "event",
        "tracking",
        "dedupe",
        "backfill",
    ),
    "api": (
        "api",
        "endpoint",
        "graphql",
        "rest",
        "versioning",
        "pagination",
        "ratelimit",
        "timeout",
        "retry",
        "idempotency",
        "client",
        "sdk",
        "contract",
        "deprecation",
        "grpc",
        "payload",
    ),
    "testing": (
        "test",
        "flaky",
        "fixture",
        "coverage",
        "mock",
        "integration",
        "e2e",
        "playwright",
        "pytest",
        "snapshot",
        "ci",
        "pipeline",
        "parallel",
        "seed",
        "regression",
        "benchmark",
    ),
}

COMMON = (
    "we the to a of and in for is it that on with this be as not but our at by from team should "
    "because when after before if so need will can was were have has would could new old more less "
    "first next last week month quarter today decided agreed found noticed tried moved kept changed "
    "fixed broke added removed slow fast cheap expensive simple risky safe stable users customers "
    "service system code change problem reason option plan step issue result cost time data work "
    "people owner decision context note default always never usually sometimes only also still"
).split()

CJK_TITLES = (
    "数据库迁移计划",
    "支付超时问题",
    "前端框架选择",
    "搜索排序改进",
    "移动端发布流程",
    "监控告警规则",
    "团队招聘计划",
    "数据管道重构",
    "接口版本策略",
    "测试稳定性",
    "認証トークンの更新",
    "検索結果の改善",
    "障害対応の手順",
    "リリース計画",
    "キャッシュ設定",
)
CJK_SENTENCES = (
    "我们计划在第三季度把数据库从旧版本迁移到新集群，先迁移只读报表。",
    "支付服务在高峰期出现超时，需要增加工作进程并设置重试。",
    "团队决定新的前端页面使用服务端渲染，减少打包体积。",
    "搜索结果的排序需要考虑标题权重和最近更新时间。",
    "监控告警太多，值班同学无法判断哪个最重要。",
    "移动端发布前必须通过完整的回归测试。",
    "数据管道每天凌晨运行，失败时需要人工补数。",
    "接口的旧版本将在下个季度下线，请客户端尽快升级。",
    "トークンの有効期限を短くして、更新処理を自動化する。",
    "検索のレイテンシを改善するためにインデックスを分割した。",
    "障害が起きたら、まず影響範囲を確認してから連絡する。",
    "リリースは毎週木曜日に行い、問題があればすぐに戻す。",
)

TITLE_TEMPLATES: dict[str, tuple[str, ...]] = {
    "decision": ("Use {A} for {B}", "Adopt {A} in {P}", "Move {B} to {A}", "Drop {A} from {P}"),
    "fact": ("{P} {B} runs on {A}", "{A} limits for {B}", "How {P} handles {B}", "{A} {B} numbers"),
    "preference": ("Prefer {A} over {B}", "Keep {B} small", "Always review {A} changes"),
    "problem": ("{P} {B} fails with {E}", "Slow {A} in {P}", "{A} {B} timeouts", "Flaky {A} {B}"),
    "context": ("Why {P} uses {A}", "Background on {A} {B}", "{P} {A} overview", "History of {B}"),
    "handoff": ("Handoff {D}: {A} {B}", "Handoff {D} {P}"),
    "note": ("{A} {B} notes", "Thoughts on {A}", "{P} {A} checklist", "Reading: {A} and {B}"),
}
HEADINGS = (
    "Context",
    "Decision",
    "Consequences",
    "Details",
    "Open questions",
    "Numbers",
    "Next steps",
    "Alternatives",
    "Symptoms",
    "Root cause",
    "Fix",
    "Links",
)
FOLDERS = tuple(f"{t}" for t in TOPICS) + (
    "inbox",
    "archive",
    "meetings",
    "people",
    "projects",
    "journal",
    "runbooks",
    "research",
)


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """The words, made-up project names and identifiers a corpus is drawn from."""

    projects: tuple[str, ...]  # capitalised code names: the long tail of the dictionary
    identifiers: tuple[str, ...]  # error codes and config keys such as ERR_PAY_504
    tail: tuple[str, ...]  # lower-case rare words (Zipf tail)
    tail_cdf: tuple[float, ...]


def _pseudo_word(rng: random.Random, syllables: int) -> str:
    onsets = (
        "b",
        "c",
        "d",
        "f",
        "g",
        "k",
        "l",
        "m",
        "n",
        "p",
        "r",
        "s",
        "t",
        "v",
        "z",
        "br",
        "st",
        "tr",
        "kr",
        "pl",
        "sh",
        "th",
        "gr",
        "dr",
    )
    vowels = ("a", "e", "i", "o", "u", "ai", "ea", "io", "ou")
    codas = ("", "", "n", "r", "s", "l", "x", "th", "nd", "rk")
    return "".join(rng.choice(onsets) + rng.choice(vowels) for _ in range(syllables)) + rng.choice(codas)


def vocabulary(seed: int = 0, tail_size: int = 6000) -> Vocabulary:
    """The vocabulary for ``seed`` (also used by ``make_queries``)."""
    rng = random.Random(f"vocab-{seed}")
    projects = sorted({_pseudo_word(rng, 2).capitalize() for _ in range(400)})
    prefixes = [t[:3].upper() for t in TOPICS] + ["DB", "PAY", "AUTH", "K8S", "SYNC", "API"]
    idents = {f"ERR_{rng.choice(prefixes)}_{rng.randint(100, 999)}" for _ in range(300)}
    idents |= {
        f"{rng.choice(prefixes).lower()}.{rng.choice(COMMON)}_{rng.choice(('ms', 'max', 'min', 'ttl'))}"
        for _ in range(100)
    }
    tail = sorted({_pseudo_word(rng, rng.randint(2, 3)) for _ in range(tail_size)})
    rng.shuffle(tail)
    weights = list(itertools.accumulate(1.0 / (r + 10) for r in range(len(tail))))
    return Vocabulary(tuple(projects), tuple(sorted(idents)), tuple(tail), tuple(w / weights[-1] for w in weights))


class _NoteWriter:
    """Generates notes one at a time from a seeded RNG and the vocabulary."""

    def __init__(self, seed: int, vocab: Vocabulary) -> None:
        self.rng = random.Random(f"corpus-{seed}")
        self.vocab = vocab
        self.titles: list[str] = []
        self.ids: list[str] = []
        self._topics = tuple(TOPICS)

    def _tail_word(self) -> str:
        v = self.vocab
        return v.tail[min(bisect.bisect_left(v.tail_cdf, self.rng.random()), len(v.tail) - 1)]

    def _sentence(self, topic: str, link_pool: list[str]) -> str:
        rng = self.rng
        words: list[str] = []
        for _ in range(rng.randint(8, 18)):
            r = rng.random()
            if r < 0.50:
                words.append(rng.choice(COMMON))
            elif r < 0.78:
                words.append(rng.choice(TOPICS[topic]))
            elif r < 0.86:
                words.append(rng.choice(TOPICS[rng.choice(self._topics)]))
            elif r < 0.97:
                words.append(self._tail_word())
            else:
                words.append(rng.choice(self.vocab.projects))
        if rng.random() < 0.06:
            words.insert(rng.randrange(len(words)), rng.choice(self.vocab.identifiers))
        if link_pool and rng.random() < 0.08:
            words.insert(rng.randrange(len(words)), f"[[{rng.choice(link_pool)}]]")
        if rng.random() < 0.04:
            words.insert(rng.randrange(len(words)), f"`{rng.choice(TOPICS[topic])}_{rng.randint(1, 99)}`")
        text = " ".join(words)
        return text[0].upper() + text[1:] + rng.choice((".", ".", ".", "?", "!"))

    def _title(self, kind: str, topic: str, date: dt.date) -> str:
        rng = self.rng
        words = TOPICS[topic]
        title = rng.choice(TITLE_TEMPLATES[kind]).format(
            A=rng.choice(words),
            B=rng.choice(words),
            P=rng.choice(self.vocab.projects),
            E=rng.choice(self.vocab.identifiers),
            D=date.isoformat(),
        )
        return title[0].upper() + title[1:]

    def note(self, i: int) -> tuple[str, str]:
        """The i-th note as (vault-relative path, file text)."""
        rng = self.rng
        kind = rng.choices(TYPES, TYPE_WEIGHTS)[0]
        topic = rng.choice(self._topics)
        created = dt.datetime(2023, 1, 1, tzinfo=dt.UTC) + dt.timedelta(minutes=rng.randrange(3 * 365 * 24 * 60))
        cjk = rng.random() < 0.03
        title = rng.choice(CJK_TITLES) + f" {i}" if cjk else self._title(kind, topic, created.date())
        if title in self.titles[-2000:]:
            title = f"{title} ({rng.choice(self.vocab.projects)})"
        note_id = f"m-{i:06d}{rng.getrandbits(20):05x}" if rng.random() < 0.7 else None
        link_pool = self.titles[-500:] if len(self.titles) > 5 else []

        fm = ["---"]
        if note_id:
            fm.append(f"id: {note_id}")
        fm.append(f'title: "{title}"')
        fm.append(f"type: {kind}")
        tags = sorted({rng.choice(TOPICS[topic]) for _ in range(rng.randint(1, 3))} | {topic})
        fm.append(f"tags: [{', '.join(tags)}]")
        fm.append(f"created: {created:%Y-%m-%dT%H:%M:%SZ}")
        if rng.random() < 0.3:
            updated = created + dt.timedelta(days=rng.randint(1, 200))
            fm.append(f"updated: {updated:%Y-%m-%dT%H:%M:%SZ}")
        fm.append(f"salience: {rng.choice((0.2, 0.3, 0.5, 0.5, 0.5, 0.6, 0.7, 0.8, 0.9))}")
        if rng.random() < 0.25:
            fm.append(f"scope: project:{rng.choice(self.vocab.projects).lower()}")
        if rng.random() < 0.15:
            fm.append(f"entities: [{rng.choice(self.vocab.projects)}, {rng.choice(self.vocab.projects)}]")
        if link_pool and rng.random() < 0.3:
            fm.append("links:")
            for _ in range(rng.randint(1, 2)):
                target = (
                    f'"[[{rng.choice(link_pool)}]]"' if rng.random() < 0.6 or not self.ids else rng.choice(self.ids)
                )
                fm.append(f"  - {{to: {target}, type: {rng.choice(LINK_TYPES)}}}")
        fm.append("---")

        body = [f"# {title}", ""]
        if cjk:
            for _ in range(rng.randint(3, 6)):
                body.append("".join(rng.choice(CJK_SENTENCES) for _ in range(rng.randint(1, 3))))
                body.append("")
            body.append(" ".join(self._sentence(topic, link_pool) for _ in range(2)))
        else:
            sections = rng.sample(HEADINGS, rng.randint(1, 3))
            budget = rng.randint(110, 190)  # words in the body
            for h in sections:
                body += [f"## {h}", ""]
                para: list[str] = []
                for _ in range(rng.randint(1, 3)):
                    sentence = self._sentence(topic, link_pool)
                    para.append(sentence)
                    budget -= sentence.count(" ") + 1
                    if budget <= 0:
                        break
                if rng.random() < 0.25:
                    items = [self._sentence(topic, link_pool) for _ in range(2)]
                    budget -= sum(s.count(" ") + 1 for s in items)
                    body.append("\n".join(f"- {s}" for s in items))
                else:
                    body.append(" ".join(para))
                body.append("")
            tail: list[str] = []
            while budget > 0:
                tail.append(self._sentence(topic, link_pool))
                budget -= tail[-1].count(" ") + 1
            if tail:
                body += [" ".join(tail), ""]
            if rng.random() < 0.2:
                body.append(f"#{topic} #{rng.choice(TOPICS[topic])}")
        self.titles.append(title)
        if note_id:
            self.ids.append(note_id)
        folder = FOLDERS[rng.randrange(len(FOLDERS))]
        slug = "-".join(w for w in "".join(c if c.isalnum() else " " for c in title.lower()).split())[:60]
        return f"notes/{folder}/{i:06d}-{slug}.md", "\n".join(fm + body).rstrip() + "\n"


def make_corpus(root: Path, n: int, seed: int = 0) -> list[str]:
    """Write ``n`` notes under ``root/notes/`` (about 20 sub-folders); returns their relative paths."""
    writer = _NoteWriter(seed, vocabulary(seed))
    paths = []
    for i in range(n):
        rel, text = writer.note(i)
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        paths.append(rel)
    return paths


def make_queries(k: int, seed: int = 0, corpus_seed: int | None = None) -> list[str]:
    """``k`` realistic 2–3 word queries over the corpus vocabulary (topic words, a project name,
    an identifier, now and then a CJK phrase), deterministic for ``seed``. The names come from the
    vocabulary of ``corpus_seed`` (default ``seed``): other queries over the same corpus ask about its
    projects and identifiers, not those of another seed's corpus."""
    vocab = vocabulary(seed if corpus_seed is None else corpus_seed)
    rng = random.Random(f"queries-{seed}")
    topics = tuple(TOPICS)
    out = []
    for _ in range(k):
        r = rng.random()
        words = TOPICS[rng.choice(topics)]
        if r < 0.60:
            q = rng.sample(words, rng.randint(2, 3))
        elif r < 0.75:
            q = [rng.choice(vocab.projects), *rng.sample(words, rng.randint(1, 2))]
        elif r < 0.88:
            q = [rng.choice(vocab.identifiers), rng.choice(words)]
        elif r < 0.95:
            q = [rng.choice(words), rng.choice(COMMON[40:]), rng.choice(words)]
        else:
            title = rng.choice(CJK_TITLES)
            q = [title[: rng.randint(2, 4)]]
        out.append(" ".join(q))
    return out


if __name__ == "__main__":  # a quick look: python benchmarks/corpus.py /tmp/demo 20
    import sys

    target, count = Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 20
    made = make_corpus(target, count)
    print(f"wrote {len(made)} notes under {target}/notes; e.g. {made[-1]}")
    print("queries:", make_queries(8))
