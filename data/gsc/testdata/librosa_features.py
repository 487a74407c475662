"""Reference GSC features for the tests of package data/gsc: the released code's recipe run by librosa.

Usage: librosa_features.py OUTDIR
Makes the test clips in OUTDIR as 16 kHz mono 16-bit WAV files: spoken words from espeak-ng (22050 Hz,
resampled to 16 kHz with librosa.resample), a chirp, white noise, a clip shorter than 1 s and one longer.
Then computes each clip's features exactly as experiments/gsc/data.py of the FiTS release does and prints
one JSON object: {"librosa": VERSION, "espeak": true|false, "clips": [{"name", "path", "samples",
"features": [[40 values] x 100 frames]}]} (frames x bands, the transpose of librosa's [bands, frames]).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import librosa
import numpy as np
import soundfile as sf

SR = 16000


def released_features(path, max_len=100):
    """The released code's _load_spectrogram(path, normalize=True, max_len=100, sr=16000)."""
    y, _ = librosa.load(path, sr=SR, mono=True)
    mel = librosa.feature.melspectrogram(y=y, sr=SR, n_fft=480, hop_length=160, power=1.0, n_mels=40,
                                         fmin=40.0, fmax=4000.0)
    spect = librosa.power_to_db(mel, ref=np.max)
    if spect.shape[1] < max_len:
        pad = np.zeros((spect.shape[0], max_len - spect.shape[1]))
        spect = np.hstack((spect, pad))
    else:
        spect = spect[:, :max_len]
    # torch.FloatTensor(spect), then (spect - spect.mean()) / spect.std() if std > 0 (unbiased std).
    x = np.asarray(spect, dtype=np.float32)
    mean = x.mean(dtype=np.float64)
    std = x.std(dtype=np.float64, ddof=1)
    if std > 0:
        x = ((x - mean) / std).astype(np.float32)
    return x.T


def espeak(word, voice, tmp):
    """espeak-ng's 22050 Hz output for word, resampled to 16 kHz."""
    raw = os.path.join(tmp, "raw.wav")
    subprocess.run(["espeak-ng", "-v", voice, "-s", "160", "-w", raw, word], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    y, sr = sf.read(raw, dtype="float32")
    if y.ndim > 1:
        y = y.mean(axis=1)
    return librosa.resample(y, orig_sr=sr, target_sr=SR)


def fit(y, n):
    """y centred in n samples (cropped or zero-padded), as Speech Commands clips are about 1 s."""
    if len(y) >= n:
        s = (len(y) - n) // 2
        return y[s:s + n]
    out = np.zeros(n, dtype=np.float32)
    s = (n - len(y)) // 2
    out[s:s + len(y)] = y
    return out


def clips(tmp):
    rng = np.random.default_rng(18)
    t1 = np.arange(SR) / SR
    out = []
    have_espeak = shutil.which("espeak-ng") is not None
    if have_espeak:
        out.append(("speech-seven", fit(espeak("seven", "en", tmp), SR)))
        out.append(("speech-backward", fit(espeak("backward", "en+f3", tmp), SR)))
        out.append(("speech-short", espeak("go", "en", tmp)[: int(0.6 * SR)]))
    # A linear chirp 50 Hz -> 6 kHz, half amplitude.
    out.append(("chirp", 0.5 * np.sin(2 * np.pi * (50 * t1 + (6000 - 50) / 2 * t1 ** 2))))
    out.append(("noise", np.clip(0.1 * rng.standard_normal(SR), -1, 1)))
    # Shorter than 1 s: 0.43 s of a tone burst in noise (fewer than 100 frames: zero padding after dB).
    ts = np.arange(int(0.43 * SR)) / SR
    out.append(("short-tone", 0.3 * np.sin(2 * np.pi * 440 * ts) * np.hanning(len(ts)) + 0.01 * rng.standard_normal(len(ts))))
    # Longer than 1 s: 1.3 s of two tones and noise (cropped to the first 100 frames).
    tl = np.arange(int(1.3 * SR)) / SR
    out.append(("long-tones", 0.2 * np.sin(2 * np.pi * 300 * tl) + 0.2 * np.sin(2 * np.pi * 2500 * tl * (tl > 0.5))
                + 0.02 * rng.standard_normal(len(tl))))
    return out, have_espeak


def main(argv):
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    outdir = argv[0]
    res = {"librosa": librosa.__version__, "clips": []}
    with tempfile.TemporaryDirectory() as tmp:
        made, res["espeak"] = clips(tmp)
    for name, y in made:
        path = os.path.join(outdir, name + ".wav")
        sf.write(path, np.clip(np.asarray(y, dtype=np.float32), -1, 1), SR, subtype="PCM_16")
        x = released_features(path)
        res["clips"].append({"name": name, "path": path, "samples": int(sf.info(path).frames),
                             "features": x.astype(np.float64).tolist()})
    json.dump(res, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
