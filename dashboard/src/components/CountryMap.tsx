import { useMemo } from 'react';
import { geoEqualEarth, geoPath } from 'd3-geo';
import { feature } from 'topojson-client';
import type { GeometryCollection, Topology } from 'topojson-specification';
import countries from 'i18n-iso-countries';
import atlas from 'world-atlas/countries-110m.json';

const WIDTH = 960;
const HEIGHT = 470;

/**
 * A world map (world-atlas's 110m outline, drawn offline with d3-geo as SVG) shading probe
 * countries blue and target countries orange, both when a country is both.
 */
export function CountryMap({ probes, targets }: { probes: Map<string, number>; targets: Map<string, number> }) {
  const shapes = useMemo(() => {
    const topology = atlas as unknown as Topology<{ countries: GeometryCollection<{ name: string }> }>;
    const collection = feature(topology, topology.objects.countries);
    const projection = geoEqualEarth().fitSize([WIDTH, HEIGHT], collection);
    const draw = geoPath(projection);
    return collection.features.map((country) => ({ id: String(country.id), name: country.properties?.name ?? '', d: draw(country) ?? '' }));
  }, []);
  // world-atlas ids are ISO 3166-1 numeric codes; the stats name countries by alpha-2.
  const byNumeric = (counts: Map<string, number>) => {
    const result = new Map<string, number>();
    for (const [alpha2, count] of counts) {
      const numeric = countries.alpha2ToNumeric(alpha2);
      if (numeric) result.set(numeric, (result.get(numeric) ?? 0) + count);
    }
    return result;
  };
  const probeIds = byNumeric(probes);
  const targetIds = byNumeric(targets);
  const described = [...probes.keys()].join(', ') || 'none';
  const describedTargets = [...targets.keys()].join(', ') || 'none';
  return (
    <figure className="map">
      <figcaption>Probe and target countries</figcaption>
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={`Probe countries: ${described}. Target countries: ${describedTargets}.`}>
        {shapes.map((shape) => {
          const probe = probeIds.get(shape.id);
          const target = targetIds.get(shape.id);
          const cls = probe && target ? 'both' : probe ? 'probe' : target ? 'target' : 'none';
          return (
            <path key={shape.id + shape.name} d={shape.d} className={`country ${cls}`}>
              <title>{`${shape.name}${probe ? `: ${probe} probe traces` : ''}${target ? `; ${target} target traces` : ''}`}</title>
            </path>
          );
        })}
      </svg>
      <p className="legend">
        <span className="swatch probe" /> probes <span className="swatch target" /> targets <span className="swatch both" /> both
      </p>
    </figure>
  );
}
