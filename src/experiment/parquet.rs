//! The results store's parquet writer: polars' own parquet encoder (`polars-parquet`, the crate
//! under `polars`' `ParquetWriter`, same version), driven column by column so that each column
//! gets the encoding its contents call for instead of a cardinality estimate per page.
//!
//! polars' writer estimates every primitive and string page's cardinality (a HyperLogLog over the
//! values) and tries a dictionary, and computes min/max statistics over long JSON strings; for the
//! store's columns that was most of the cost of writing results. Here:
//! - integer columns: delta encoding (parquet's DELTA_BINARY_PACKED: cell and step ids rise
//!   by small steps, counts and codes vary little), with min/max statistics (the merge reads
//!   each row group's range of cells from them); a dictionary took a fifth more of a run's time
//!   writing every decision and made files a fifth larger;
//! - float columns: plain (times are all distinct; a dictionary for rewards and incumbents cost
//!   more to build than it saved in compression), with null counts but no min/max statistics;
//! - string columns: a dictionary built here when the values repeat (learner names, policy ids,
//!   datasets, constant columns), found by comparing the strings' 16-byte views before hashing
//!   text; plain, without min/max statistics, when they do not (the JSON columns);
//! - everything else: plain;
//! - pages compressed with zstd at its fastest level (files about 2 % larger than at its default
//!   level 3, written a sixth faster).
//!
//! Files read back with any parquet reader; the Arrow schema in the footer is the frame's, so
//! polars reads back exactly the frame that was written. Output depends only on the rows and the
//! row-group boundaries, so equal inputs give byte-identical files.

use std::collections::HashMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

use anyhow::{Context, Result};
use polars::prelude::*;
use polars_arrow::array::{Array, DictionaryArray, PrimitiveArray, Utf8ViewArray};
use polars_arrow::datatypes::{ArrowDataType, IntegerType};
use polars_parquet::parquet::CowBuffer;
use polars_parquet::parquet::compression::Compression;
use polars_parquet::parquet::page::{
    CompressedDataPage, CompressedDictPage, CompressedPage, DataPageHeader, Page,
};
use polars_parquet::write::{
    CompressionOptions, DynIter, DynStreamingIterator, Encoding, FileWriter, ParquetType,
    StatisticsOptions, Version, WriteOptions, ZstdLevel, array_to_columns,
};

/// A dictionary for a string column is built only when the values repeat: at most one distinct
/// value in this many rows (and at most `MAX_DICTIONARY` values).
const ROWS_PER_VALUE: usize = 4;
const MAX_DICTIONARY: usize = 1 << 16;
/// Rows looked at before a dictionary is tried: more than half of them distinct, and none is.
const SAMPLE: usize = 64;

/// Writes a parquet file one row group at a time.
pub struct ParquetFile {
    writer: FileWriter<BufWriter<File>>,
    fields: Vec<ParquetType>,
    options: WriteOptions,
    /// Statistics of string columns written plain and of float columns: null counts only.
    counts_only: WriteOptions,
    /// Per column: the names its u32 codes stand for, when the frame holds codes for a string
    /// column (see `create`).
    coded: Vec<Option<Names>>,
}

/// The strings a coded column's u32 values index.
pub type Names = std::sync::Arc<[String]>;

impl ParquetFile {
    /// Create `path` (truncating it) for frames with `schema`. A column named in `coded` holds
    /// u32 codes into its names in the frames and is a string column in the file, written
    /// exactly as the strings themselves would be (the frames skip gathering the strings).
    pub fn create(path: &Path, schema: &Schema, coded: &[(String, Names)]) -> Result<ParquetFile> {
        let file =
            File::create(path).with_context(|| format!("{}: cannot create", path.display()))?;
        let mut arrow = schema.to_arrow(CompatLevel::newest());
        let mut codes = Vec::with_capacity(arrow.len());
        for (name, field) in arrow.iter_mut() {
            let names = coded
                .iter()
                .find(|(c, _)| c.as_str() == name.as_str())
                .map(|(_, n)| n.clone());
            if names.is_some() {
                if field.dtype != ArrowDataType::UInt32 {
                    anyhow::bail!(
                        "{}: coded column '{name}' is {:?}, not u32 (a bug)",
                        path.display(),
                        field.dtype
                    );
                }
                field.dtype = ArrowDataType::Utf8View;
            }
            codes.push(names);
        }
        let statistics = StatisticsOptions::default();
        let options = WriteOptions {
            statistics,
            version: Version::V1,
            // Pages are compressed here (see `compress`); this only names the codec.
            compression: CompressionOptions::Zstd(Some(
                ZstdLevel::try_new(ZSTD_LEVEL).expect("a valid zstd level"),
            )),
            data_page_size: None,
        };
        let counts_only = WriteOptions {
            statistics: StatisticsOptions {
                min_value: false,
                max_value: false,
                distinct_count: false,
                ..statistics
            },
            ..options
        };
        // Buffered: the encoder issues many small writes.
        let writer = FileWriter::try_new(BufWriter::with_capacity(1 << 20, file), arrow, options)
            .map_err(anyhow::Error::from)
            .with_context(|| format!("{}: cannot write parquet", path.display()))?;
        let fields = writer.parquet_schema().fields().to_vec();
        Ok(ParquetFile {
            writer,
            fields,
            options,
            counts_only,
            coded: codes,
        })
    }

    /// Write a row group read from another file unchanged (see [`RawGroup`]): the bytes are
    /// those `write_group` would give for its rows, as that file's writer encoded them the same
    /// way.
    pub fn write_raw(&mut self, group: RawGroup) -> Result<()> {
        if group.columns.len() != self.fields.len() {
            anyhow::bail!(
                "a row group of {} columns copied into a file of {} (a bug)",
                group.columns.len(),
                self.fields.len()
            );
        }
        self.write_pages(group.rows, group.columns)
    }

    fn write_pages(&mut self, rows: usize, columns: Vec<Vec<CompressedPage>>) -> Result<()> {
        let columns = columns.iter().map(|pages| {
            Ok(DynStreamingIterator::new(
                polars_parquet::read::fallible_streaming_iterator::convert(
                    pages.iter().map(PolarsResult::Ok),
                ),
            ))
        });
        self.writer.write(rows as u64, DynIter::new(columns))?;
        Ok(())
    }

    /// Write `df` (whose schema is the file's) as one row group.
    pub fn write_group(&mut self, df: &DataFrame) -> Result<()> {
        if df.height() == 0 {
            return Ok(());
        }
        let mut df = df.clone();
        df.rechunk_mut();
        let mut columns: Vec<Vec<CompressedPage>> = Vec::with_capacity(df.width());
        for batch in df.iter_chunks(CompatLevel::newest(), false) {
            for ((array, type_), names) in batch
                .into_arrays()
                .into_iter()
                .zip(&self.fields)
                .zip(&self.coded)
            {
                let (array, encoding, options) = match names {
                    Some(names) => self.decode_as(array, names)?,
                    None => self.encode_as(array),
                };
                for pages in array_to_columns(array, type_.clone(), options, &[encoding])? {
                    columns.push(pages.map(|p| compress(p?)).collect::<Result<_>>()?);
                }
            }
        }
        self.write_pages(df.height(), columns)
    }

    /// `encode_as` for a coded column: the same dictionary (or plain strings) that its strings
    /// would get, built from the codes.
    fn decode_as(
        &self,
        array: Box<dyn Array>,
        names: &Names,
    ) -> Result<(Box<dyn Array>, Encoding, WriteOptions)> {
        let codes = array
            .as_any()
            .downcast_ref::<PrimitiveArray<u32>>()
            .context("a coded column holds u32 codes (a bug)")?;
        if let Some(&bad) = codes
            .non_null_values_iter()
            .find(|&c| c as usize >= names.len())
            .as_ref()
        {
            anyhow::bail!("code {bad} of a column of {} names (a bug)", names.len());
        }
        let name = |c: u32| names[c as usize].as_str();
        let n = codes.len();
        let valid = |i: usize| codes.is_valid(i);
        // The decisions of `dictionary`, on codes instead of views.
        let head = n.min(SAMPLE);
        let mut seen: Vec<&str> = Vec::new();
        let mut worth = true;
        for i in (0..head).filter(|&i| valid(i)) {
            let s = name(codes.value(i));
            if !seen.contains(&s) {
                seen.push(s);
                if seen.len() > head / 2 {
                    worth = false;
                    break;
                }
            }
        }
        let limit = (n / ROWS_PER_VALUE).clamp(1, MAX_DICTIONARY);
        // Codes of equal names share one key: keys in order of first appearance.
        let mut key_of_text: HashMap<&str, u32> = HashMap::new();
        let mut key_of_code: Vec<u32> = vec![u32::MAX; names.len()];
        let mut values: Vec<&str> = Vec::new();
        let mut keys: Vec<u32> = Vec::with_capacity(n);
        for (i, &c) in codes.values().iter().enumerate() {
            if !worth {
                break;
            }
            if !valid(i) {
                keys.push(0);
                continue;
            }
            let mut k = key_of_code[c as usize];
            if k == u32::MAX {
                let s = name(c);
                k = match key_of_text.get(s) {
                    Some(&k) => k,
                    None => {
                        if values.len() >= limit {
                            worth = false;
                            break;
                        }
                        values.push(s);
                        key_of_text.insert(s, values.len() as u32 - 1);
                        values.len() as u32 - 1
                    }
                };
                key_of_code[c as usize] = k;
            }
            keys.push(k);
        }
        if worth && !values.is_empty() {
            let keys =
                PrimitiveArray::<u32>::from_vec(keys).with_validity(codes.validity().cloned());
            let dict = DictionaryArray::try_new(
                ArrowDataType::Dictionary(
                    IntegerType::UInt32,
                    Box::new(ArrowDataType::Utf8View),
                    false,
                ),
                keys,
                Utf8ViewArray::from_slice_values(&values).boxed(),
            )?;
            return Ok((Box::new(dict), Encoding::RleDictionary, self.options));
        }
        let mut text = polars_arrow::array::MutableBinaryViewArray::<str>::with_capacity(n);
        for c in codes.iter() {
            text.push(c.map(|&c| name(c)));
        }
        Ok((Box::new(text.freeze()), Encoding::Plain, self.counts_only))
    }

    /// The array to encode, its encoding and its statistics.
    fn encode_as(&self, array: Box<dyn Array>) -> (Box<dyn Array>, Encoding, WriteOptions) {
        use polars_arrow::datatypes::PhysicalType as P;
        match array.dtype().to_physical_type() {
            P::Utf8View => {
                let text = array
                    .as_any()
                    .downcast_ref::<Utf8ViewArray>()
                    .expect("a Utf8View array");
                match dictionary(text) {
                    Some(d) => (Box::new(d), Encoding::RleDictionary, self.options),
                    None => (array, Encoding::Plain, self.counts_only),
                }
            }
            P::Primitive(p) if p.is_float() => (array, Encoding::Plain, self.counts_only),
            // Integers: cell and step ids and counts, runs of small values; their differences
            // bit-packed take less room and time than a dictionary.
            P::Primitive(_) => (array, Encoding::DeltaBinaryPacked, self.options),
            _ => (array, Encoding::Plain, self.options),
        }
    }

    /// Write the footer; returns the file's size in bytes. The file is flushed but not synced.
    pub fn finish(mut self) -> Result<u64> {
        let size = self.writer.end(None)?;
        let mut inner = self.writer.into_inner();
        std::io::Write::flush(&mut inner)?;
        Ok(size)
    }
}

/// zstd's level for every page: its fastest (files about 2 % larger than at its default level 3,
/// written a sixth faster).
const ZSTD_LEVEL: i32 = 1;

thread_local! {
    /// A compression context per thread, reused for every page (polars-parquet makes one per
    /// page, which cost as much as a tenth of the compression).
    static ZSTD: std::cell::RefCell<Option<zstd::bulk::Compressor<'static>>> =
        const { std::cell::RefCell::new(None) };
}

/// A page compressed with zstd at `ZSTD_LEVEL`, as polars-parquet's `Compressor` would (format
/// version 1 pages: the whole buffer is compressed).
fn compress(page: Page) -> Result<CompressedPage> {
    let zstd = |raw: &[u8]| -> Result<Vec<u8>> {
        ZSTD.with(|cell| {
            let mut cell = cell.borrow_mut();
            if cell.is_none() {
                *cell = Some(zstd::bulk::Compressor::new(ZSTD_LEVEL)?);
            }
            let c = cell.as_mut().expect("set above");
            let mut out = Vec::with_capacity(zstd::zstd_safe::compress_bound(raw.len()));
            c.compress_to_buffer(raw, &mut out)?;
            Ok(out)
        })
    };
    Ok(match page {
        Page::Data(p) => {
            let DataPageHeader::V1(_) = p.header() else {
                anyhow::bail!("a version 2 data page (the store writes version 1; a bug)");
            };
            let raw = p.buffer();
            CompressedPage::Data(CompressedDataPage::new(
                p.header().clone(),
                CowBuffer::Owned(zstd(raw)?),
                Compression::Zstd,
                raw.len(),
                p.descriptor.clone(),
                p.num_rows.unwrap_or_else(|| p.num_values()),
            ))
        }
        Page::Dict(d) => CompressedPage::Dict(CompressedDictPage::new(
            CowBuffer::Owned(zstd(&d.buffer)?),
            Compression::Zstd,
            d.buffer.len(),
            d.num_values,
            d.is_sorted,
        )),
    })
}

/// A row group of a parquet file as its compressed pages, read to be written again unchanged:
/// the merge copies the row groups of parts that fall on its own row-group boundaries instead
/// of decoding and encoding their rows again.
pub struct RawGroup {
    rows: usize,
    columns: Vec<Vec<CompressedPage>>,
}

impl RawGroup {
    pub fn rows(&self) -> usize {
        self.rows
    }
}

/// A parquet file's row groups: each one's rows and the least and greatest value of one u64
/// column (from the statistics the writer keeps; `None` where there are none).
pub struct GroupIndex {
    pub meta: polars_parquet::parquet::metadata::FileMetadata,
    pub groups: Vec<GroupInfo>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GroupInfo {
    pub rows: usize,
    pub first_row: usize,
    pub min: Option<u64>,
    pub max: Option<u64>,
}

/// The row groups of `path` and the range of its u64 column `column` in each.
pub fn group_index(path: &Path, column: &str) -> Result<GroupIndex> {
    use polars_parquet::parquet::statistics::Statistics;
    let mut file = File::open(path).with_context(|| format!("{}: cannot open", path.display()))?;
    let meta = polars_parquet::parquet::read::read_metadata(&mut file)
        .map_err(anyhow::Error::from)
        .with_context(|| format!("{}: cannot read as parquet", path.display()))?;
    let at = meta
        .schema()
        .columns()
        .iter()
        .position(|c| c.path_in_schema.len() == 1 && c.path_in_schema[0].as_str() == column)
        .with_context(|| format!("{}: no column '{column}'", path.display()))?;
    let mut groups = Vec::with_capacity(meta.row_groups.len());
    let mut first_row = 0;
    for g in &meta.row_groups {
        let (mut min, mut max) = (None, None);
        if let Some(Ok(Statistics::Int64(s))) = g.parquet_columns()[at].statistics(&meta.footer_buf)
        {
            // u64 values are stored in i64's bits.
            min = s.min_value.map(|v| v as u64);
            max = s.max_value.map(|v| v as u64);
        }
        groups.push(GroupInfo {
            rows: g.num_rows(),
            first_row,
            min,
            max,
        });
        first_row += g.num_rows();
    }
    Ok(GroupIndex { meta, groups })
}

/// Row group `g` of `path` (whose footer is `index`) as its compressed pages.
pub fn read_raw_group(path: &Path, index: &GroupIndex, g: usize) -> Result<RawGroup> {
    use std::io::{Read, Seek, SeekFrom};
    let context = || format!("{}: cannot read row group {g}", path.display());
    let group = index.meta.row_groups.get(g).with_context(context)?;
    let mut file = File::open(path).with_context(context)?;
    let mut columns = Vec::with_capacity(group.n_columns());
    for column in group.parquet_columns() {
        let range = column.byte_range();
        let mut bytes = vec![0u8; (range.end - range.start) as usize];
        file.seek(SeekFrom::Start(range.start))
            .and_then(|_| file.read_exact(&mut bytes))
            .with_context(context)?;
        let reader = std::io::Cursor::new(polars_buffer::Buffer::from(bytes));
        let pages =
            polars_parquet::parquet::read::PageReader::new(reader, column, Vec::new(), usize::MAX);
        let mut out = Vec::new();
        for page in pages {
            let mut page = page.map_err(anyhow::Error::from).with_context(context)?;
            if let CompressedPage::Data(d) = &mut page {
                // Flat columns: a page's rows are its values (the writer needs them).
                d.num_rows = Some(d.num_values());
            }
            out.push(page);
        }
        columns.push(out);
    }
    Ok(RawGroup {
        rows: group.num_rows(),
        columns,
    })
}

trait IsFloat {
    fn is_float(&self) -> bool;
}

impl IsFloat for polars_arrow::types::PrimitiveType {
    fn is_float(&self) -> bool {
        use polars_arrow::types::PrimitiveType as T;
        matches!(self, T::Float16 | T::Float32 | T::Float64)
    }
}

/// `text` as a dictionary array (values in order of first appearance), or `None` when its values
/// do not repeat enough to be worth it.
fn dictionary(text: &Utf8ViewArray) -> Option<DictionaryArray<u32>> {
    let n = text.len();
    // A quick look first: columns of distinct values (the JSON ones) show it in their first rows.
    let head = n.min(SAMPLE);
    let mut seen: Vec<&str> = Vec::new();
    for i in (0..head).filter(|&i| text.is_valid(i)) {
        let s = text.value(i);
        if !seen.contains(&s) {
            seen.push(s);
            if seen.len() > head / 2 {
                return None;
            }
        }
    }
    let limit = (n / ROWS_PER_VALUE).clamp(1, MAX_DICTIONARY);
    let views = text.views();
    let mut by_view: HashMap<u128, u32, BuildViewHasher> = HashMap::default();
    let mut by_text: HashMap<&str, u32> = HashMap::new();
    let mut values: Vec<&str> = Vec::new();
    let mut keys: Vec<u32> = Vec::with_capacity(n);
    let mut last: Option<(u128, u32)> = None;
    for (i, view) in views.iter().enumerate() {
        if !text.is_valid(i) {
            keys.push(0);
            continue;
        }
        let bits = view.as_u128();
        let key = match last {
            Some((b, k)) if b == bits => k,
            _ => match by_view.get(&bits) {
                Some(&k) => k,
                None => {
                    // Equal views mean equal strings; equal strings may still have other views.
                    let s = text.value(i);
                    let k = match by_text.get(s) {
                        Some(&k) => k,
                        None => {
                            if values.len() >= limit {
                                return None;
                            }
                            let k = values.len() as u32;
                            values.push(s);
                            by_text.insert(s, k);
                            k
                        }
                    };
                    by_view.insert(bits, k);
                    k
                }
            },
        };
        last = Some((bits, key));
        keys.push(key);
    }
    if values.is_empty() {
        return None;
    }
    let keys = PrimitiveArray::<u32>::from_vec(keys).with_validity(text.validity().cloned());
    let values = Utf8ViewArray::from_slice_values(&values);
    DictionaryArray::try_new(
        ArrowDataType::Dictionary(
            IntegerType::UInt32,
            Box::new(ArrowDataType::Utf8View),
            false,
        ),
        keys,
        values.boxed(),
    )
    .ok()
}

/// A hasher for 16-byte string views (already well mixed by their prefix and offset bits): one
/// multiply and fold instead of SipHash, which cost as much as the rest of the dictionary.
#[derive(Default)]
struct ViewHasher(u64);

impl std::hash::Hasher for ViewHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 =
                (self.0.rotate_left(5) ^ u64::from(*b)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }

    fn write_u128(&mut self, x: u128) {
        let m = (x as u64 ^ (x >> 64) as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 = m ^ (m >> 29);
    }
}

type BuildViewHasher = std::hash::BuildHasherDefault<ViewHasher>;

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!(
            "banditbench-parquet-{name}-{}.parquet",
            std::process::id()
        ))
    }

    fn write(df: &DataFrame, groups: &[usize], path: &Path) -> u64 {
        write_coded(df, groups, path, &[])
    }

    fn write_coded(
        df: &DataFrame,
        groups: &[usize],
        path: &Path,
        coded: &[(String, Names)],
    ) -> u64 {
        let mut f = ParquetFile::create(path, df.schema(), coded).unwrap();
        let mut at = 0;
        for &n in groups {
            f.write_group(&df.slice(at as i64, n)).unwrap();
            at += n;
        }
        f.finish().unwrap()
    }

    /// Per column of the first row group: whether it has a dictionary page.
    fn dictionary_pages(path: &Path) -> Vec<bool> {
        let mut file = File::open(path).unwrap();
        let meta = polars_parquet::read::read_metadata(&mut file).unwrap();
        meta.row_groups[0]
            .parquet_columns()
            .iter()
            .map(|c| c.dictionary_page_offset().is_some())
            .collect()
    }

    fn frame(n: usize) -> DataFrame {
        let learners = ["SVC", "a learner with a long name", "kNN"];
        DataFrame::new_infer_height(vec![
            Column::new(
                "cell".into(),
                (0..n as u64).map(|i| i / 3).collect::<Vec<_>>(),
            ),
            Column::new(
                "arm".into(),
                (0..n)
                    .map(|i| (i % 5 != 4).then_some(learners[i % 3]))
                    .collect::<Vec<_>>(),
            ),
            Column::new(
                "json".into(),
                (0..n)
                    .map(|i| format!("{{\"SVC\":{i}}}"))
                    .collect::<Vec<_>>(),
            ),
            Column::new(
                "score".into(),
                (0..n)
                    .map(|i| (i % 7 != 0).then_some(i as f64 / 3.0))
                    .collect::<Vec<_>>(),
            ),
        ])
        .unwrap()
    }

    #[test]
    fn frames_read_back_equal_with_dictionaries_only_where_values_repeat() {
        let df = frame(1000);
        let path = scratch("roundtrip");
        let size = write(&df, &[600, 400], &path);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), size);
        let back = ParquetReader::new(File::open(&path).unwrap())
            .finish()
            .unwrap();
        assert_eq!(back.schema(), df.schema());
        assert!(back.equals_missing(&df), "{back}");
        // arm (three names, some null): a dictionary; cell (integers): delta-encoded; the
        // distinct JSON strings and the floats: plain.
        assert_eq!(dictionary_pages(&path), [false, true, false, false]);
        let mut file = File::open(&path).unwrap();
        let meta = polars_parquet::read::read_metadata(&mut file).unwrap();
        let cell = &meta.row_groups[0].parquet_columns()[0];
        let mut pages = polars_parquet::parquet::read::get_page_iterator(
            cell,
            std::io::Cursor::new(polars_buffer::Buffer::from(std::fs::read(&path).unwrap())),
            Vec::new(),
            usize::MAX,
        )
        .unwrap();
        let Some(Ok(CompressedPage::Data(page))) = pages.next() else {
            panic!("no data page");
        };
        assert_eq!(
            polars_parquet::parquet::encoding::Encoding::try_from(page.header().encoding())
                .unwrap(),
            polars_parquet::parquet::encoding::Encoding::DeltaBinaryPacked
        );
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn a_string_column_is_plain_when_its_values_stop_repeating_late() {
        // The first 64 rows repeat, the rest are all distinct: past one value in four rows the
        // dictionary is given up.
        let n = 4096;
        let text: Vec<String> = (0..n)
            .map(|i| {
                if i < 64 {
                    "same".into()
                } else {
                    format!("row {i}")
                }
            })
            .collect();
        let df = DataFrame::new_infer_height(vec![Column::new("t".into(), text)]).unwrap();
        let path = scratch("late");
        write(&df, &[n], &path);
        assert_eq!(dictionary_pages(&path), [false]);
        let back = ParquetReader::new(File::open(&path).unwrap())
            .finish()
            .unwrap();
        assert!(back.equals(&df));
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn equal_rows_give_equal_bytes_however_the_frame_was_chunked() {
        let df = frame(500);
        let mut pieces = df.slice(0, 120);
        for (at, n) in [(120, 1), (121, 200), (321, 179)] {
            pieces.vstack_mut(&df.slice(at, n)).unwrap();
        }
        assert!(pieces.first_col_n_chunks() > 1);
        let (a, b) = (scratch("whole"), scratch("pieces"));
        write(&df, &[256, 244], &a);
        write(&pieces, &[256, 244], &b);
        assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
        let _ = std::fs::remove_file(&a);
        let _ = std::fs::remove_file(&b);
    }

    #[test]
    fn a_coded_column_is_written_byte_for_byte_as_its_strings() {
        let names: Names = ["SVC", "a learner with a long name", "kNN", "x"]
            .map(String::from)
            .into();
        let codes: Vec<u32> = (0..300u32).map(|i| i * 7 % 4).collect();
        let text: Vec<&str> = codes.iter().map(|&c| names[c as usize].as_str()).collect();
        let frame = |arm: Column| {
            DataFrame::new_infer_height(vec![
                Column::new("cell".into(), (0..300u64).collect::<Vec<_>>()),
                arm,
            ])
            .unwrap()
        };
        let coded = frame(Column::new("arm".into(), codes));
        let strings = frame(Column::new("arm".into(), text));
        // 256 rows: a dictionary; 32 rows: one too; 12 rows with 4 names: more than one name in
        // four rows, so plain strings.
        let groups = [256, 32, 12];
        let (a, b) = (scratch("coded"), scratch("strings"));
        write_coded(&coded, &groups, &a, &[("arm".into(), names.clone())]);
        write(&strings, &groups, &b);
        assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
        let mut file = File::open(&a).unwrap();
        let meta = polars_parquet::read::read_metadata(&mut file).unwrap();
        let dict: Vec<bool> = meta
            .row_groups
            .iter()
            .map(|g| g.parquet_columns()[1].dictionary_page_offset().is_some())
            .collect();
        assert_eq!(dict, [true, true, false]);
        let back = ParquetReader::new(File::open(&a).unwrap())
            .finish()
            .unwrap();
        assert!(back.equals(&strings));
        // A code past the names is an error, not a panic.
        let bad = frame(Column::new("arm".into(), vec![9u32; 300]));
        let mut f = ParquetFile::create(&a, bad.schema(), &[("arm".into(), names)]).unwrap();
        let e = format!("{:#}", f.write_group(&bad).unwrap_err());
        assert!(e.contains("code 9 of a column of 4 names"), "{e}");
        let _ = std::fs::remove_file(&a);
        let _ = std::fs::remove_file(&b);
    }
}
