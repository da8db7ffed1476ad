package geo

import (
	"math"
	"strings"
)

// EarthRadius is the radius, in metres, Redis's distances take the earth
// to have (geohash_helper.c's EARTH_RADIUS_IN_METERS, as Redis's GEODIST
// documentation describes: the earth assumed a perfect sphere).
const EarthRadius = 6372797.560856

// mercatorMax is half the circumference of the Web Mercator square in
// metres, the widest a cell of step 1 is (Redis's MERCATOR_MAX).
const mercatorMax = 20037726.37

func rad(deg float64) float64 { return deg * (math.Pi / 180.0) }
func deg(rad float64) float64 { return rad / (math.Pi / 180.0) }

// latDistance is the distance along a meridian between two latitudes.
func latDistance(lat1, lat2 float64) float64 {
	return EarthRadius * math.Abs(rad(lat2)-rad(lat1))
}

// Distance is the great-circle distance in metres between two points, by
// the haversine formula (R. W. Sinnott, "Virtues of the Haversine", 1984),
// as Redis computes it: along the meridian when the longitudes are the
// same.
func Distance(lon1, lat1, lon2, lat2 float64) float64 {
	v := sin((rad(lon2) - rad(lon1)) / 2)
	if v == 0 {
		return latDistance(lat1, lat2)
	}
	lat1r, lat2r := rad(lat1), rad(lat2)
	u := sin((lat2r - lat1r) / 2)
	// Each product rounded on its own, as C computes it (no fused
	// multiply-add).
	a := float64(u*u) + float64(float64(float64(cos(lat1r)*cos(lat2r))*v)*v)
	return 2.0 * EarthRadius * asin(math.Sqrt(a))
}

// Unit is the metres of a unit's name (m, km, ft, mi, any case), as
// GEODIST's and GEOSEARCH's documentation list them; false for another.
func Unit(name string) (float64, bool) {
	switch strings.ToLower(name) {
	case "m":
		return 1, true
	case "km":
		return 1000, true
	case "ft":
		return 0.3048, true
	case "mi":
		return 1609.34, true
	}
	return 0, false
}
