"""The registry of public data sets that judgekit's methods read by name (``data:NAME/path``).

One :class:`DataSet` per set: where it comes from (a repository at a pinned commit, or an
official URL), its files with their sha256 and size in bytes, its licence and citation. A file
is fetched from ``url`` (for GitHub, ``raw.githubusercontent.com`` at the pinned commit) and
kept only when its sha256 equals the pinned one (:mod:`judgekit.datasets.fetch`). Every pinned
checksum below was computed from the official file's bytes at the named commit.

Files of one set are listed as a table, one line each: the file's name in the set's folder,
its path in the source repository (``=``: the same name under the set's ``root``; a leading
``/``: from the repository's top), sha256, size in bytes. An archive member adds the
archive's sha256 and size, and ``url`` is then the archive's.

``global-mmlu-lite`` has no pinned checksum: its official home is Hugging Face (parquet), the
JSONL copy on GitHub could not be read byte for byte here. It is fetched only on request
(``judgekit data get global-mmlu-lite --trust``), and the sha256 of what came is recorded and
shown (trust on first download); see :func:`judgekit.datasets.fetch.ensure_file`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import quote

from judgekit.errors import InputError

RAW_GITHUB = "https://raw.githubusercontent.com"


@dataclass(frozen=True)
class DataFile:
    """One file of a data set.

    Attributes:
        path: its name in the set's folder (``/``-separated).
        url: where it is downloaded from (for an archive member: the archive's URL).
        sha256: of the file as stored (hex), or None where no checksum could be pinned.
        size: in bytes (None where unknown).
        member: the archive member stored as ``path`` (None: ``url`` is the file itself).
        archive_sha256, archive_size: of the archive (members only).
    """

    path: str
    url: str
    sha256: str | None
    size: int | None
    member: str | None = None
    archive_sha256: str | None = None
    archive_size: int | None = None


@dataclass(frozen=True)
class DataSet:
    """A public data set: ``name`` (as in ``data:NAME/path``), ``title``, ``licence`` (SPDX id
    or the terms in words), ``licence_url``, ``citation``, ``source`` (repository and commit or
    URL, in words), ``files``, and ``notes`` (subsets, terms, why a checksum is not pinned)."""

    name: str
    title: str
    licence: str
    licence_url: str
    citation: str
    source: str
    files: tuple[DataFile, ...]
    notes: str = ""

    @property
    def size(self) -> int | None:
        """Bytes of all files as stored (None when a size is unknown)."""
        sizes = [f.size for f in self.files]
        return None if None in sizes else sum(s for s in sizes if s is not None)

    @property
    def pinned(self) -> bool:
        """Whether every file has a pinned sha256."""
        return all(f.sha256 for f in self.files)

    def file(self, path: str) -> DataFile:
        """The file named ``path`` in the set.

        Raises:
            InputError: no such file (the message lists the set's files).
        """
        for item in self.files:
            if item.path == path:
                return item
        names = ", ".join(f.path for f in self.files)
        raise InputError(None, f"data:{self.name}/{path}: no such file in '{self.name}' "
                         f"(its files: {names})")  # fmt: skip


def github_files(repo: str, commit: str, root: str, table: str) -> tuple[DataFile, ...]:
    """Files of ``repo`` at ``commit`` from a table (module doc): ``name upstream sha256 size
    [archive_sha256 archive_size]`` a line; an upstream path is under ``root`` unless it
    starts with ``/``, and ``=`` is the file's own name."""
    files = []
    for line in table.strip().splitlines():
        name, upstream, sha, size, *archive = line.split()
        upstream = name if upstream == "=" else upstream
        upstream = upstream[1:] if upstream.startswith("/") else root + upstream
        url = f"{RAW_GITHUB}/{repo}/{commit}/{quote(upstream)}"
        if archive:
            member = name
            files.append(DataFile(name, url, sha, int(size), member, archive[0], int(archive[1])))
        else:
            files.append(DataFile(name, url, sha, int(size)))
    return tuple(files)


def get_set(name: str, registry: Mapping[str, DataSet] | None = None) -> DataSet:
    """The registered set ``name``.

    Raises:
        InputError: an unknown name (the message lists the known ones).
    """
    sets = REGISTRY if registry is None else registry
    if name not in sets:
        raise InputError(None, f"unknown data set '{name}' (known: {', '.join(sorted(sets))})")
    return sets[name]


NTREX_COMMIT = "8561f6a622db9edad1217683e5c83daefd8bb2bf"
MTME_COMMIT = "e7f88b51a5d36dd5a9c9c1d80556f69637716cd4"
MQM_COMMIT = "7fadea281aff8db61cc72fc3d469a4dca78b82a6"
LLMBAR_COMMIT = "900616bff90b6c6c8e1681f7d079250637c55992"
WMT22_COMMIT = "20240a2e96a50e823ea8cdf37fd8af52547146e3"
GMMLU_COMMIT = "a42bca79ff44e2cfea602afa5ab0e7aa2cfb46cf"

_NTREX = """
newstest2019-src.eng.txt     =                  389e8f5796c66db4f646dfad33e1ec622d74767af5ef112b42a1f2cd814df3cc  251739
newstest2019-ref.deu.txt     =                  259d7406a07b63e6b5b9c4a22fb76b85e2578a3fa0a4e541a50f4f7348e5c1b2  306436
newstest2019-ref.zho-CN.txt  =                  8bcd6f0868d33f26c8da12f55a82f66088a7b60a5f7b0b1a99dcec51daa8054a  241603
newstest2019-ref.hin.txt     =                  10d612b3960dc1f90d297aff7e3c6d39e6eb7221b912cef0c053d9f510e41bbc  674699
newstest2019-ref.spa.txt     =                  0ad8129e5ce0bea86ba7e0ea0db0504d6626b8a4d2a7cf4c44b7791c70e99b84  299333
newstest2019-ref.rus.txt     =                  a7e3601298b0368659a5c006c52809cf6792e02eb94bde9b9693333278d85732  505414
newstest2019-ref.fra.txt     =                  1dd80d337f6a75c6ed579a95f09ca9b85d87d6e488d0a428c5f89cca99553136  314688
newstest2019-ref.por.txt     =                  ad2b8c2d91be6a17f9c0df0dd25e358b8de6168212b4bbc9718ea41c4df9ecd8  288192
newstest2019-ref.ita.txt     =                  e568982e6249a11a7ada13d5b00fe65ca722479e0399a7a761a905f340dd04d2  297684
newstest2019-ref.jpn.txt     =                  4debd275d04414b71c95bad5f68e7275174e32a4ed33ece1b9a43a227aea2fca  328104
newstest2019-ref.zho-TW.txt  =                  2a8bf6effcd8fb62e9cacc9be82944ee917259d44d2365f1152ec175ff8fad03  235539
newstest2019-ref.spa-MX.txt  =                  79196a7d05549692e321fe70e75e51044d6312aac717e7ecf75412c9c99c1bc8  301039
newstest2019-ref.fra-CA.txt  =                  d48bf072286890622743ea5bdf17aad2ec0e3ba8603e798d3311a38e39d0d027  312896
newstest2019-ref.por-BR.txt  =                  7256f0e90cc213b816c0d40a16c1c327f555095756bf5c5cbc306d8c9b767383  276712
newstest2019-ref.eng-GB.txt  =                  26f9045f7f1901a50cf6da74d767739020e93c2117b448e659b1bcf6e3945f6a  251749
newstest2019-ref.eng-US.txt  =                  a163045804ddb5e9529c7cbdb751c6f6f7491a31f69dcc13129bfe1521595094  251710
newstest2019-ref.eng-IN.txt  =                  4c32e8978f31024863915fda78947339d720fc5a140e0602d5391ddf88ce1125  253795
DOCUMENT_IDS.tsv             /DOCUMENT_IDS.tsv  88a8b0ff1eae47e83f60dcde01075b8c87d75ced59ca09e0af1eb539958e05d5  30754
LANGUAGES.tsv                /LANGUAGES.tsv     06b295e71976aa7adfef358d7c24a91b61212ca7aafb244c199619661f808158  1862
"""

_MTME = """
en-de.src.txt                      sources/en-de.txt                            097b5ccf5552f62c052bad7878caeeec2d3db431c02076fbfe1fd057fb272eef  197749
en-de.refA.txt                     references/en-de.refA.txt                    b02877fdc8050e73d18bdcb5a31779ccb51028b30bd33e5c59e813130c5508b2  234302
en-de.docs.tsv                     documents/en-de.docs                         c10069c093e037ddcba15df7b3446194ecc27df532d1327380da6d6cbc389c5d  17364
en-de.hyp.GPT4-5shot.txt           system-outputs/en-de/GPT4-5shot.txt          426a5e294296848671af529801264a5730dc2fc942b43d930ee019a7a816524e  233250
en-de.hyp.NLLB_Greedy.txt          system-outputs/en-de/NLLB_Greedy.txt         c57f9452f5b7e081fd5d235cad470c4d27360d392da4ce2fdce18d70deba986a  192151
en-de.hyp.NLLB_MBR_BLEU.txt        system-outputs/en-de/NLLB_MBR_BLEU.txt       c21f961f6f08c2117e345cb16c571ecc4d5aa9e7c2f314f8cffdd9f05dbdf0a1  188351
en-de.hyp.ONLINE-A.txt             system-outputs/en-de/ONLINE-A.txt            0ccda29c7e09e092ecfcd205f499f894e009d4952060d1abc1d2e01cd1cb69c5  234668
en-de.mqm.seg.score.tsv            human-scores/en-de.mqm.seg.score             6f6e617ac577dd1d90ca0968bf16ec15e972b3d93c4aad26188e49bc45d270cd  110937
en-de.mqm.sys.score.tsv            human-scores/en-de.mqm.sys.score             61796aa352d9c09a97d449f07f8415a375644f4bd7bc7b396be3cb5f91d197e8  375
en-de.da-sqm.seg.score.tsv         human-scores/en-de.da-sqm.seg.score          55008f5efc288d17a45e2d7437e7dafb5a7bf6d0d202380190cd159f3556065e  109253
en-de.da-sqm.sys.score.tsv         human-scores/en-de.da-sqm.sys.score          5a25eff7a1f1532676bb0881d6f24b62c47f7153312eee857cb6df8c297b74ea  356
en-de.GEMBA-MQM-src.seg.score.tsv  metric-scores/en-de/GEMBA-MQM-src.seg.score  490ab8f3e0552f631fcfbc54484621d18dc26d1b203a551a678be89954bf535b  99421
en-de.GEMBA-MQM-src.sys.score.tsv  metric-scores/en-de/GEMBA-MQM-src.sys.score  63ecf5b091a2f99a286c9d508ee7f230c58924292c63148aa1f194b5103db4da  410
en-de.BLEU-refA.seg.score.tsv      metric-scores/en-de/BLEU-refA.seg.score      92bfb31b669ce9b78362e7ad2fad3de5d90cbfc1a73e28e3ab341d2de1f7e75f  206558
en-de.BLEU-refA.sys.score.tsv      metric-scores/en-de/BLEU-refA.sys.score      da09f8c89a7c059f544d409bd63441dabcad5cf1a82f6a54732535544ab131b5  372
en-de.chrF-refA.seg.score.tsv      metric-scores/en-de/chrF-refA.seg.score      724111c0cec467b33aad612b46e9a3e901185dd6b670bf9c8529f36a0009ace2  197898
en-de.chrF-refA.sys.score.tsv      metric-scores/en-de/chrF-refA.sys.score      2932bbcc68f01fa5087cc979752b78d0cad9d98c79d32a023ea035c0b54cf651  366
zh-en.src.txt                      sources/zh-en.txt                            d91ce2717cdfbf63041289f9d31f07545a8d80c4a6fd4d0bf9a1126b0d6b063a  219348
zh-en.refA.txt                     references/zh-en.refA.txt                    5dd09a10f2775a1d76fe51a28ec62309a0b8a26809f08a14c9d456821e3a1a4d  296746
zh-en.docs.tsv                     documents/zh-en.docs                         088991483dd31bc3d5e7b46c75b3c6ceeff77935e02c98cffe04eb393b3c0098  54658
zh-en.hyp.GPT4-5shot.txt           system-outputs/zh-en/GPT4-5shot.txt          8313f171140ffd4d270e24d8a5b389490f36bd660c5f941c29c7cad9f4ff2834  297830
zh-en.hyp.NLLB_Greedy.txt          system-outputs/zh-en/NLLB_Greedy.txt         8777cb97d09c4697a4e1f4fab47d89e57d2f27f1cd479ae91ad136d3c7063d69  279569
zh-en.hyp.NLLB_MBR_BLEU.txt        system-outputs/zh-en/NLLB_MBR_BLEU.txt       552436f5fdce893f17014864b496ea06f8f2245e214198a016e44db1e123910d  273308
zh-en.hyp.ONLINE-A.txt             system-outputs/zh-en/ONLINE-A.txt            a26506c4577362a4b7114b92a9333899ea7f55e8d9efecefa9d00f0fc572e368  289157
zh-en.mqm.seg.score.tsv            human-scores/zh-en.mqm.seg.score             faa729fc596f61928b00f5c661945d508e53a0eba4c2f19b2e73538ec0bd27d2  467392
zh-en.mqm.sys.score.tsv            human-scores/zh-en.mqm.sys.score             9454a7f956e341468ebdaf4e25667f75144373cfb8c6da0eeedc30354c332b3f  458
zh-en.da-sqm.seg.score.tsv         human-scores/zh-en.da-sqm.seg.score          081db29e4c474fa86c5d314e94fc4d85ffdb693e4327a1661e416fea397b2493  460117
zh-en.da-sqm.sys.score.tsv         human-scores/zh-en.da-sqm.sys.score          364d36fc38ea3322566b19d2e7503794e8f842baa24620e7bb32e1a020a55928  424
zh-en.GEMBA-MQM-src.seg.score.tsv  metric-scores/zh-en/GEMBA-MQM-src.seg.score  00c11aa1d82d6927837c74fd4f262798bdfb8b2caf07f2833976c8e6a3eeabbd  421084
zh-en.GEMBA-MQM-src.sys.score.tsv  metric-scores/zh-en/GEMBA-MQM-src.sys.score  732e0165275805a28e8028f67bf2dba866b76c774e5c15155810d426fa09c082  493
zh-en.BLEU-refA.seg.score.tsv      metric-scores/zh-en/BLEU-refA.seg.score      7a6316833aae2b235dbc3aa31e0920744f080595d6673c34c31983ec17c49f82  889314
zh-en.BLEU-refA.sys.score.tsv      metric-scores/zh-en/BLEU-refA.sys.score      e452404b0a6ba466a5049b1e99c97297fb4cffb205b3c3b7417d52e9c6ca3719  456
zh-en.chrF-refA.seg.score.tsv      metric-scores/zh-en/chrF-refA.seg.score      6633434ef028bd2d51a94a4ab5672084acde459194e80ced3f17aa98e648aa77  873371
zh-en.chrF-refA.sys.score.tsv      metric-scores/zh-en/chrF-refA.sys.score      e0b41bc02f214c79f15a9ab2e913281f90561a96d677535137d2537c0d93f979  455
"""

_MQM_TED = """
mqm_ted_ende.tsv  ted/ende/mqm_ted_ende.tsv  3952dc904997dda31c03421243862cb8a093f9a712fd90dc97b9709b4bb387b3  2341948
mqm_ted_zhen.tsv  ted/zhen/mqm_ted_zhen.tsv  d91fc0dd21c1949f1e7570671d01ceb1798ebd8d7ea8998844b1a35983de4ed3  2597899
"""

_LLMBAR = """
Natural/dataset.json               =         f7127b7aa78104cb8e03a2b1b3ac0077e95b125714dd441a8ee63666145a3375  91269
Adversarial/Neighbor/dataset.json  =         6712c7eda6342602e0bc7c06c282fa95e2110d4e741a284026a62d937f9780a0  131988
Adversarial/GPTInst/dataset.json   =         1002425f73c2cf54b6e6de99bce3f6c60fa2a17d13194772e37d7481c1351d42  211768
Adversarial/GPTOut/dataset.json    =         1ff56e520d7607750a9866a3be0f5b850392ca4477a1f69d80f32bd3e310f561  32640
Adversarial/Manual/dataset.json    =         0d9598769a39cdbbd265778c37e49939d41d5f76dcfb17bd75dcfa07516d3837  79050
"""

_WMT22_HITS = """
WMT22.Appraise.calibrationHITs.20221103.csv          =  2c30f2616ba10e5563b5066f9feb1e99276134115ef69b77bf8767901a5edb45  1076934
WMT22.Appraise.calibrationHITs.20221103.mapping.csv  =  4baaea7467460b435035f6afdc693a7fa76e806be88d4fccb3b0fdb758f9465b  16192
header.calibrationHITs.csv                           =  3351eaa60949f066ffec76ceaa78a09a016b153bcae03927366fe9b288f54e9b  89
header.calibrationHITs.mapping.csv                   =  41b9d87e6710f1ca0bdea3165debc73b7ec89511787ccf779f48379afe009e9e  24
"""

_MQM_SXS = """
sxs_mqm_generalMT2023_ende.3ratingsPerSegment.tsv  generalMT2023/ende/sxs_mqm_generalMT2023_ende.3ratingsPerSegment.tsv.tar.gz  377dd3b86f0d0faa135faa628cb5255b070a36266a915817dc6695de466b1356  30661373  df9f5af3e6498bb9dddc998acc292ea4a34161f8637dd107de6d692ed319222c  2029013
sxs_mqm_generalMT2023_zhen.3ratingsPerSegment.tsv  generalMT2023/zhen/sxs_mqm_generalMT2023_zhen.3ratingsPerSegment.tsv.tar.gz  b5a4edc8da8939ab12a227df591c2e036c7871bac261b8b4314a56b6ce47ae8a  40039501  beb5eb98a34a79ec36212488d9044361ec21c8a2c54f50d509c086246244b3e2  3604461
"""

WMT_TERMS = "WMT terms: the WMT test data and system outputs are for research use"

REGISTRY: dict[str, DataSet] = {
    s.name: s
    for s in (
        DataSet(
            name="ntrex128",
            title="NTREX-128: WMT19 newstest2019 English source, references in 16 languages and "
            "locale variants (zho-TW, spa-MX, fra-CA, por-BR, eng-GB/US/IN)",
            licence="CC-BY-SA-4.0",
            licence_url="https://creativecommons.org/licenses/by-sa/4.0/",
            citation="Federmann, Kocmi and Xin 2022, NTREX-128 - News Test References for MT "
            "Evaluation of 128 Languages (SUMEval 2022)",
            source=f"github:MicrosoftTranslator/NTREX@{NTREX_COMMIT}",
            files=github_files("MicrosoftTranslator/NTREX", NTREX_COMMIT, "NTREX-128/", _NTREX),
            notes="the core languages of judgekit's methods; NTREX has 128 in all",
        ),
        DataSet(
            name="wmt23-mtme",
            title="WMT23 MT-Metrics-Eval v2, en-de and zh-en: sources, reference A, documents, "
            "4 system outputs, expert MQM, DA+SQM, GEMBA-MQM, BLEU and chrF scores",
            licence="GPL-3.0; WMT terms",
            licence_url="https://www.gnu.org/licenses/gpl-3.0.html",
            citation="Freitag et al. 2023, Results of WMT23 Metrics Shared Task; Kocmi et al. "
            "2023, Findings of WMT23; Kocmi and Federmann 2023, GEMBA-MQM",
            source=f"github:wmt-conference/ErrorSpanAnnotation@{MTME_COMMIT}, "
            "data/mt-metrics-eval-v2/wmt23/ (a copy of Google's MT-Metrics-Eval v2 data)",
            files=github_files(
                "wmt-conference/ErrorSpanAnnotation",
                MTME_COMMIT,
                "data/mt-metrics-eval-v2/wmt23/",
                _MTME,
            ),
            notes=f"{WMT_TERMS}; files renamed to {{lp}}.NAME.{{seg,sys}}.score.tsv, {{lp}}.hyp.SYSTEM.txt; the "
            "score files cover every system, the outputs 4 (GPT4-5shot, NLLB_Greedy, "
            "NLLB_MBR_BLEU, ONLINE-A)",
        ),
        DataSet(
            name="mqm-ted",
            title="Google expert MQM error spans on the WMT21 TED talks, en-de and zh-en",
            licence="Apache-2.0; WMT terms",
            licence_url="https://www.apache.org/licenses/LICENSE-2.0",
            citation="Freitag et al. 2021, Experts, Errors, and Context (TACL; arXiv 2104.14478)",
            source=f"github:google/wmt-mqm-human-evaluation@{MQM_COMMIT}, ted/",
            files=github_files("google/wmt-mqm-human-evaluation", MQM_COMMIT, "", _MQM_TED),
            notes=WMT_TERMS,
        ),
        DataSet(
            name="mqm-wmt23-sxs",
            title="Google side-by-side MQM on WMT23 generalMT, en-de and zh-en, 3 raters per "
            "segment",
            licence="Apache-2.0; WMT terms",
            licence_url="https://www.apache.org/licenses/LICENSE-2.0",
            citation="Freitag et al. 2021, Experts, Errors, and Context; the WMT23 side-by-side "
            "MQM release of google/wmt-mqm-human-evaluation",
            source=f"github:google/wmt-mqm-human-evaluation@{MQM_COMMIT}, generalMT2023/",
            files=github_files("google/wmt-mqm-human-evaluation", MQM_COMMIT, "", _MQM_SXS),
            notes=f"{WMT_TERMS}; each TSV is extracted from its .tsv.tar.gz (2.0 and 3.6 MB "
            "downloaded)",
        ),
        DataSet(
            name="llmbar",
            title="LLMBar: instruction-following pairwise preference, Natural (100) and 4 "
            "Adversarial subsets (319), with gold labels",
            licence="MIT",
            licence_url="https://opensource.org/license/mit",
            citation="Zeng et al. 2024, Evaluating Large Language Models at Evaluating "
            "Instruction Following (ICLR 2024)",
            source=f"github:princeton-nlp/LLMBar@{LLMBAR_COMMIT}, Dataset/LLMBar/",
            files=github_files("princeton-nlp/LLMBar", LLMBAR_COMMIT, "Dataset/LLMBar/", _LLMBAR),
            notes="the items only; the published judges' verdicts on 20 Natural items ship with "
            "judgekit (prompts/pairwise/llmbar/)",
        ),
        DataSet(
            name="wmt22-calibration-hits",
            title="WMT22 DA+SQM calibration HITs: 653 items scored by 11-27 annotators each",
            licence="WMT terms",
            licence_url="https://www.statmt.org/wmt22/",
            citation="Kocmi et al. 2022, Findings of the 2022 Conference on Machine Translation",
            source=f"github:wmt-conference/wmt22-news-systems@{WMT22_COMMIT}, "
            "humaneval/DA+SQM/calibration-HITs/",
            files=github_files(
                "wmt-conference/wmt22-news-systems",
                WMT22_COMMIT,
                "humaneval/DA+SQM/calibration-HITs/",
                _WMT22_HITS,
            ),
            notes=f"{WMT_TERMS}; the repository has no licence file",
        ),
        DataSet(
            name="global-mmlu-lite",
            title="Global-MMLU-Lite, English test: 400 MMLU items labelled CS/CA, with each "
            "annotator's required-knowledge and time-sensitive votes",
            licence="Apache-2.0 (MMLU: MIT)",
            licence_url="https://www.apache.org/licenses/LICENSE-2.0",
            citation="Singh et al. 2024, Global MMLU: Understanding and Addressing Cultural and "
            "Linguistic Biases in Multilingual Evaluation (arXiv 2412.03304)",
            source="Hugging Face CohereLabs/Global-MMLU-Lite (config en, split test), as the "
            f"JSONL copy in github:MNC31/mnc31-ai-culture-language-explorer@{GMMLU_COMMIT}",
            files=(
                DataFile(
                    "en_test.jsonl",
                    f"{RAW_GITHUB}/MNC31/mnc31-ai-culture-language-explorer/{GMMLU_COMMIT}/"
                    "public/data/global_mmlu_lite/en_test.jsonl",
                    None,
                    None,
                ),
            ),
            notes="Global-MMLU-Lite is Apache-2.0, the MMLU questions MIT; no pinned checksum: the official files are on Hugging Face (parquet) and "
            "the GitHub copy could not be read byte for byte; fetched only with --trust, "
            "which records and shows the sha256 of what came",
        ),
    )
}
